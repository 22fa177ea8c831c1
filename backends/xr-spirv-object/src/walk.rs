//! Walking the instructions of a SPIR-V module.
//!
//! A module is a sequence of 32-bit words: a header of five words (the
//! magic number [`MAGIC`], the SPIR-V version, the generator, the id bound
//! and a reserved schema word), then the instructions back to back. The
//! first word of an instruction holds its word count, itself included, in
//! the high 16 bits and its opcode in the low 16 bits; its operands are the
//! `word count - 1` words after it.
//!
//! Everything in XR that reads or rewrites SPIR-V words — reflection,
//! debug-information stripping and the rewriting of locations and bindings
//! in `xr-spirv`, the source-language rewrite of `xr-compiler-slang`, the
//! override patching and block unwrapping of the WGSL example — walks them
//! with this one walker, so that the bounds are checked in one place: an
//! instruction with a word count of 0 (which would never advance) or one
//! that runs past the end of the module is an error that names its word,
//! never a panic, an endless loop or a read past the end. Opcodes are
//! named with the `spirv` crate's [`Op`] (this crate re-exports the crate
//! as `xr_spirv_object::spirv`, so that every user names them with the same
//! version), not written as numbers.

use spirv::Op;
use std::fmt;
use std::iter::FusedIterator;

/// The SPIR-V magic number, the first word of every module (in the
/// module's own byte order; a byte-swapped module is refused).
pub const MAGIC: u32 = spirv::MAGIC_NUMBER;

/// The length of the module header in words: magic number, version,
/// generator, id bound and schema.
pub const HEADER_WORDS: usize = 5;

/// One instruction of a module, borrowed from its words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instruction<'a> {
    /// Index of the instruction's first word in the module's words (the
    /// header included): `words[offset + 1 + n]` is operand `n`, for
    /// rewriting an operand in place.
    pub offset: usize,
    /// The opcode, as written (the low 16 bits of the first word). Opcodes
    /// newer than the `spirv` crate are walked too; [`Instruction::op`]
    /// names the known ones.
    pub opcode: u32,
    /// The operand words: the instruction less its first word.
    pub operands: &'a [u32],
}

impl Instruction<'_> {
    /// The opcode as the `spirv` crate names it; `None` for an opcode it
    /// does not know.
    pub fn op(&self) -> Option<Op> {
        Op::from_u32(self.opcode)
    }

    /// The instruction's length in words, its first word included.
    pub fn word_count(&self) -> usize {
        1 + self.operands.len()
    }

    /// Index of the word after the instruction: the next one's offset.
    pub fn end(&self) -> usize {
        self.offset + self.word_count()
    }
}

/// Why a module could not be walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkError {
    /// Fewer words than the header.
    NoHeader {
        /// How many words there are.
        words: usize,
    },
    /// The first word is not [`MAGIC`].
    BadMagic {
        /// The first word.
        magic: u32,
    },
    /// An instruction with a word count of 0.
    ZeroWordCount {
        /// Index of the instruction's first word.
        offset: usize,
        /// Its opcode.
        opcode: u32,
    },
    /// An instruction longer than the words left.
    Truncated {
        /// Index of the instruction's first word.
        offset: usize,
        /// Its opcode.
        opcode: u32,
        /// The word count it claims.
        word_count: usize,
        /// The words from its first to the end of the module.
        words_left: usize,
    },
}

impl fmt::Display for WalkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            WalkError::NoHeader { words } => {
                write!(f, "not a SPIR-V module: {words} words, shorter than the {HEADER_WORDS}-word header")
            }
            WalkError::BadMagic { magic } => {
                write!(f, "not a SPIR-V module: magic number 0x{magic:08x}, not 0x{MAGIC:08x}")
            }
            WalkError::ZeroWordCount { offset, opcode } => {
                write!(f, "malformed SPIR-V instruction at word {offset}: {} with a word count of 0", OpName(opcode))
            }
            WalkError::Truncated { offset, opcode, word_count, words_left } => write!(
                f,
                "truncated SPIR-V instruction at word {offset}: {} of {word_count} words, {words_left} left",
                OpName(opcode)
            ),
        }
    }
}

impl std::error::Error for WalkError {}

/// An opcode for messages: `OpDecorate`, or `opcode 9999` for one the
/// `spirv` crate does not know.
struct OpName(u32);

impl fmt::Display for OpName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match Op::from_u32(self.0) {
            Some(op) => write!(f, "Op{op:?}"),
            None => write!(f, "opcode {}", self.0),
        }
    }
}

/// Walks the instructions of the module `words` after its header.
///
/// The header is checked here (its length and magic number); each
/// instruction's length as it is reached: the iterator yields an `Err` for
/// the first instruction with a word count of 0 or past the end, and then
/// ends.
pub fn instructions(words: &[u32]) -> Result<Instructions<'_>, WalkError> {
    if words.len() < HEADER_WORDS {
        return Err(WalkError::NoHeader { words: words.len() });
    }
    if words[0] != MAGIC {
        return Err(WalkError::BadMagic { magic: words[0] });
    }
    Ok(Instructions { words, offset: HEADER_WORDS })
}

/// Every instruction of the module `words` (see [`instructions`]), or the
/// first error: for readers that take several passes.
pub fn instruction_list(words: &[u32]) -> Result<Vec<Instruction<'_>>, WalkError> {
    instructions(words)?.collect()
}

/// The iterator of [`instructions`].
#[derive(Clone, Debug)]
pub struct Instructions<'a> {
    words: &'a [u32],
    /// Index of the next instruction's first word; the length of `words`
    /// once walked to the end or past an error.
    offset: usize,
}

impl<'a> Iterator for Instructions<'a> {
    type Item = Result<Instruction<'a>, WalkError>;

    fn next(&mut self) -> Option<Self::Item> {
        let offset = self.offset;
        let first = *self.words.get(offset)?;
        let word_count = (first >> 16) as usize;
        let opcode = first & 0xFFFF;
        let words_left = self.words.len() - offset;
        if word_count == 0 || word_count > words_left {
            // Nothing after a bad length can be found: the walk ends here.
            self.offset = self.words.len();
            return Some(Err(if word_count == 0 {
                WalkError::ZeroWordCount { offset, opcode }
            } else {
                WalkError::Truncated { offset, opcode, word_count, words_left }
            }));
        }
        self.offset = offset + word_count;
        Some(Ok(Instruction { offset, opcode, operands: &self.words[offset + 1..offset + word_count] }))
    }
}

impl FusedIterator for Instructions<'_> {}

/// The first word of an instruction `op` of `word_count` words, its first
/// word included.
///
/// # Panics
///
/// If `word_count` is 0 or does not fit in 16 bits.
pub fn first_word(op: Op, word_count: usize) -> u32 {
    assert!((1..=0xFFFF).contains(&word_count), "a SPIR-V instruction of {word_count} words");
    ((word_count as u32) << 16) | op as u32
}

/// The words of an instruction `op` with `operands`.
///
/// # Panics
///
/// If it would have more than 65535 words.
pub fn instruction(op: Op, operands: &[u32]) -> Vec<u32> {
    let mut words = Vec::with_capacity(operands.len() + 1);
    words.push(first_word(op, operands.len() + 1));
    words.extend_from_slice(operands);
    words
}

/// The text of a literal string operand that starts at `operands[0]`:
/// UTF-8 bytes, little-endian within each word, up to the first nul (or the
/// end of `operands`, in a malformed module); invalid UTF-8 is replaced.
/// The operands after the string are ignored.
pub fn literal_string(operands: &[u32]) -> String {
    let bytes: Vec<u8> = operands.iter().flat_map(|w| w.to_le_bytes()).take_while(|b| *b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `text` as a literal string operand: its UTF-8 bytes and a nul,
/// zero-padded to whole words.
pub fn string_operand(text: &str) -> Vec<u32> {
    let mut bytes = text.as_bytes().to_vec();
    bytes.push(0);
    bytes.resize(bytes.len().next_multiple_of(4), 0);
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `spirv-as --target-env vulkan1.0` of this module (which `spirv-val`
    /// accepts):
    ///
    /// ```text
    /// OpCapability Shader
    /// OpMemoryModel Logical GLSL450
    /// OpEntryPoint GLCompute %main "main"
    /// OpExecutionMode %main LocalSize 1 1 1
    /// OpName %main "main"
    /// %void = OpTypeVoid
    /// %fn = OpTypeFunction %void
    /// %main = OpFunction %void None %fn
    /// %entry = OpLabel
    /// OpReturn
    /// OpFunctionEnd
    /// ```
    #[rustfmt::skip]
    const TINY: [u32; 39] = [
        0x0723_0203, 0x0001_0000, 0x0007_0000, 0x0000_0005, 0x0000_0000, // header, id bound 5
        0x0002_0011, 0x0000_0001, // OpCapability Shader
        0x0003_000e, 0x0000_0000, 0x0000_0001, // OpMemoryModel Logical GLSL450
        0x0005_000f, 0x0000_0005, 0x0000_0001, 0x6e69_616d, 0x0000_0000, // OpEntryPoint
        0x0006_0010, 0x0000_0001, 0x0000_0011, 0x0000_0001, 0x0000_0001, 0x0000_0001, // OpExecutionMode
        0x0004_0005, 0x0000_0001, 0x6e69_616d, 0x0000_0000, // OpName
        0x0002_0013, 0x0000_0002, // OpTypeVoid
        0x0003_0021, 0x0000_0003, 0x0000_0002, // OpTypeFunction
        0x0005_0036, 0x0000_0002, 0x0000_0001, 0x0000_0000, 0x0000_0003, // OpFunction
        0x0002_00f8, 0x0000_0004, // OpLabel
        0x0001_00fd, // OpReturn
        0x0001_0038, // OpFunctionEnd
    ];

    /// (offset, op, operands) of an instruction, or the error.
    type Walked = Result<(usize, Op, Vec<u32>), WalkError>;

    /// Every instruction of `words` as [`Walked`].
    fn walk(words: &[u32]) -> Vec<Walked> {
        instructions(words)
            .expect("a header")
            .map(|i| i.map(|i| (i.offset, i.op().expect("a known opcode"), i.operands.to_vec())))
            .collect()
    }

    /// What [`walk`] makes of [`TINY`].
    fn tiny_walked() -> Vec<Walked> {
        let main = u32::from_le_bytes(*b"main");
        vec![
            Ok((5, Op::Capability, vec![1])),
            Ok((7, Op::MemoryModel, vec![0, 1])),
            Ok((10, Op::EntryPoint, vec![5, 1, main, 0])),
            Ok((15, Op::ExecutionMode, vec![1, 17, 1, 1, 1])),
            Ok((21, Op::Name, vec![1, main, 0])),
            Ok((25, Op::TypeVoid, vec![2])),
            Ok((27, Op::TypeFunction, vec![3, 2])),
            Ok((30, Op::Function, vec![2, 1, 0, 3])),
            Ok((35, Op::Label, vec![4])),
            Ok((37, Op::Return, vec![])),
            Ok((38, Op::FunctionEnd, vec![])),
        ]
    }

    #[test]
    fn walks_a_real_module() {
        assert_eq!(walk(&TINY), tiny_walked());
        let list = instruction_list(&TINY).expect("well formed");
        assert_eq!(list.len(), 11);
        // Every instruction ends where the next starts, the last at the end.
        for pair in list.windows(2) {
            assert_eq!(pair[0].end(), pair[1].offset);
        }
        assert_eq!(list.last().map(Instruction::end), Some(TINY.len()));
        let entry = list[2];
        assert_eq!((entry.opcode, entry.word_count()), (Op::EntryPoint as u32, 5));
        assert_eq!(literal_string(&entry.operands[2..]), "main");
        // The encoders write what the assembler wrote.
        assert_eq!(instruction(Op::EntryPoint, &[5, 1, u32::from_le_bytes(*b"main"), 0]), TINY[10..15]);
        assert_eq!(string_operand("main"), [u32::from_le_bytes(*b"main"), 0]);
        assert_eq!(first_word(Op::Return, 1), TINY[37]);
        // A header alone has no instructions.
        assert_eq!(instruction_list(&TINY[..HEADER_WORDS]), Ok(vec![]));
    }

    #[test]
    fn a_truncated_module_ends_the_walk_with_an_error() {
        // OpFunction at word 30 claims 5 words; cut one short, then two.
        for (cut, words_left) in [(34, 4), (33, 3)] {
            let mut expected = tiny_walked()[..7].to_vec();
            expected.push(Err(WalkError::Truncated {
                offset: 30,
                opcode: Op::Function as u32,
                word_count: 5,
                words_left,
            }));
            assert_eq!(walk(&TINY[..cut]), expected, "cut to {cut} words");
            assert_eq!(
                instruction_list(&TINY[..cut]),
                Err(WalkError::Truncated { offset: 30, opcode: Op::Function as u32, word_count: 5, words_left })
            );
        }
        // A last instruction that claims more than there is.
        let mut long = TINY.to_vec();
        long.extend([first_word(Op::Decorate, 4), 1]);
        let walked = walk(&long);
        assert_eq!(walked[..11], tiny_walked()[..]);
        assert_eq!(
            walked[11..],
            [Err(WalkError::Truncated { offset: 39, opcode: Op::Decorate as u32, word_count: 4, words_left: 2 })]
        );
        assert_eq!(
            walked[11].clone().unwrap_err().to_string(),
            "truncated SPIR-V instruction at word 39: OpDecorate of 4 words, 2 left"
        );
    }

    #[test]
    fn a_zero_word_count_is_an_error_not_an_endless_loop() {
        // A zero word where OpMemoryModel was: opcode 0, count 0.
        let mut zero = TINY.to_vec();
        zero[7] = 0;
        assert_eq!(walk(&zero), [tiny_walked()[0].clone(), Err(WalkError::ZeroWordCount { offset: 7, opcode: 0 })]);
        // An opcode with a count of 0.
        zero[7] = Op::MemoryModel as u32;
        let mut walker = instructions(&zero).expect("a header");
        assert!(walker.next().expect("OpCapability").is_ok());
        let error = walker.next().expect("an error").unwrap_err();
        assert_eq!(error, WalkError::ZeroWordCount { offset: 7, opcode: Op::MemoryModel as u32 });
        assert_eq!(error.to_string(), "malformed SPIR-V instruction at word 7: OpMemoryModel with a word count of 0");
        // Nothing after it, however often asked.
        assert_eq!(walker.next(), None);
        assert_eq!(walker.next(), None);
        assert_eq!(instruction_list(&zero), Err(error));
    }

    #[test]
    fn refuses_what_is_not_a_module() {
        assert_eq!(instructions(&TINY[..4]).unwrap_err(), WalkError::NoHeader { words: 4 });
        assert_eq!(instruction_list(&[]), Err(WalkError::NoHeader { words: 0 }));
        let mut swapped = TINY;
        swapped[0] = MAGIC.swap_bytes();
        assert_eq!(instructions(&swapped).unwrap_err(), WalkError::BadMagic { magic: 0x0302_2307 });
        assert!(WalkError::BadMagic { magic: 1 }.to_string().starts_with("not a SPIR-V module"));
    }

    #[test]
    fn walks_opcodes_it_cannot_name() {
        let mut words = TINY[..HEADER_WORDS].to_vec();
        words.extend([(2 << 16) | 0xFFFE, 7]);
        let list = instruction_list(&words).expect("well formed");
        assert_eq!((list[0].opcode, list[0].op(), list[0].operands), (0xFFFE, None, &[7][..]));
        words.push((3 << 16) | 0xFFFE);
        assert_eq!(
            instruction_list(&words).unwrap_err().to_string(),
            "truncated SPIR-V instruction at word 7: opcode 65534 of 3 words, 1 left"
        );
    }

    proptest::proptest! {
        /// Any words after a header: the walk ends, without a panic, having
        /// yielded instructions that tile the words up to at most one error.
        /// (Word counts are kept to 0–7, so that walks go past a few.)
        #[test]
        fn any_words_are_walked_or_refused(body in proptest::collection::vec(proptest::prelude::any::<u32>(), 0..64)) {
            let body = body.iter().map(|w| w & 0x0007_FFFF);
            let words: Vec<u32> = TINY[..HEADER_WORDS].iter().copied().chain(body).collect();
            let mut next = HEADER_WORDS;
            let mut failed = false;
            for item in instructions(&words).expect("a header") {
                proptest::prop_assert!(!failed, "nothing after an error");
                match item {
                    Ok(i) => {
                        proptest::prop_assert_eq!(i.offset, next);
                        proptest::prop_assert_eq!(i.opcode, words[next] & 0xFFFF);
                        next = i.end();
                    }
                    Err(WalkError::ZeroWordCount { offset, .. } | WalkError::Truncated { offset, .. }) => {
                        proptest::prop_assert_eq!(offset, next);
                        failed = true;
                    }
                    Err(other) => proptest::prop_assert!(false, "{other}"),
                }
            }
            proptest::prop_assert!(failed || next == words.len());
        }
    }

    #[test]
    fn literal_strings() {
        for text in ["", "a", "main", "uv_0", "tëxt"] {
            let operand = string_operand(text);
            assert_eq!(operand.len(), text.len() / 4 + 1, "{text:?}: a nul and padding");
            assert_eq!(literal_string(&operand), text);
            // Operands after the string are not part of it.
            assert_eq!(literal_string(&[&operand[..], &[0x4141_4141]].concat()), text);
        }
        // No nul: up to the end. Invalid UTF-8: replaced.
        assert_eq!(literal_string(&[u32::from_le_bytes(*b"abcd")]), "abcd");
        assert_eq!(literal_string(&[0x0000_00FF]), "\u{FFFD}");
    }
}
