//! "did you mean `X`?" for a name that is not one of those known: the
//! closest known name by edit distance (transpositions count once), if it is
//! close enough to be a typo — at most a third of the name's length, at
//! most 3, as rustc and cargo suggest.

/// The known name closest to `word`, if one is close enough to be what was meant.
pub fn closest<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count().max(3) / 3).min(3);
    let word_lower = word.to_lowercase();
    known
        .into_iter()
        .filter(|name| *name != word)
        .map(|name| (strsim::osa_distance(&word_lower, &name.to_lowercase()), name))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

/// `"; did you mean `X`?"` for the closest known name, or nothing.
pub fn did_you_mean<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, known).map_or_else(String::new, |name| format!("; did you mean `{name}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_name_and_other_words_find_none() {
        let stages = ["vertex", "fragment", "compute", "geometry"];
        assert_eq!(closest("fragmnet", stages), Some("fragment"), "a transposition is one edit");
        assert_eq!(closest("Vertex", stages), Some("vertex"), "case alone");
        assert_eq!(closest("vertx", stages), Some("vertex"));
        assert_eq!(closest("pixel", stages), None, "nothing near");
        assert_eq!(closest("vertex", stages), None, "a known name needs no suggestion");
        // Short names allow one edit: "ab" is not a typo of "xy".
        assert_eq!(closest("ab", ["xy", "abc"]), Some("abc"));
        assert_eq!(closest("ab", ["xy"]), None);
        assert_eq!(did_you_mean("kidn", ["name", "kind"]), "; did you mean `kind`?");
        assert_eq!(did_you_mean("zzzz", ["name", "kind"]), "");
    }

    /// The limit is a third of the name's length, and never more than 3
    /// edits however long the name: a long name 4 edits from another is a
    /// different name, not a typo of it.
    #[test]
    fn a_suggestion_is_at_most_a_third_of_the_name_and_at_most_3_edits_away() {
        let known = ["ray_generation_shader"];
        // 21 letters: a third is 7, the cap 3.
        assert_eq!(closest("ray_generatoin_shader", known), Some(known[0]), "one transposition");
        assert_eq!(closest("rey_generetion_shadar", known), Some(known[0]), "3 edits");
        assert_eq!(closest("rey_generetion_shodar", known), None, "4 edits: past the cap, though under a third");
        // 6 letters: 2 edits, not 3.
        assert_eq!(closest("vurtix", ["vertex"]), Some("vertex"), "2 edits");
        assert_eq!(closest("wurtux", ["vertex"]), None, "3 edits: past a third of 6");
    }
}
