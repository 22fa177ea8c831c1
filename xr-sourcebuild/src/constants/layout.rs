//! Where a constant that lives in a buffer keeps its components
//! ([`MemberLayout`]): what the plugins that write uniform-block members
//! and push constants into a block's bytes share. It does not cross the
//! plugin boundary.

use super::abi::{ConstantType, ConstantValue};
// Named in the docs only.
#[cfg(doc)]
use super::ConstantInfo;

/// Where a constant that lives in a buffer (a uniform block member, a push
/// constant) keeps each component, as SPIR-V reflection gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberLayout {
    /// Type of one element.
    pub ty: ConstantType,
    /// Array length; 1 for a non-array.
    pub array_size: u32,
    /// Bytes from one array element to the next.
    pub array_stride: usize,
    /// Bytes from one matrix column (or row, if `row_major`) to the next.
    pub matrix_stride: usize,
    /// The matrix is stored row by row.
    pub row_major: bool,
}

impl MemberLayout {
    /// Where each word of `value` goes when the member starts at byte
    /// `offset`, from array element `first` on: (byte offset, word).
    /// `value` must have passed [`ConstantInfo::check`].
    #[cfg(test)]
    fn writes(&self, offset: usize, first: u32, value: &ConstantValue<'_>) -> Vec<(usize, u32)> {
        let mut writes = Vec::with_capacity(value.data.len());
        self.visit(offset, first, value, |at, word| writes.push((at, word)));
        writes
    }

    /// Writes `value` into `target` (the block's bytes, little-endian)
    /// where the member starting at byte `offset` keeps it, from array
    /// element `first` on, without allocating. Writes nothing and returns
    /// `false` where a component would lie outside `target`. `value` must
    /// have passed [`ConstantInfo::check`].
    pub fn write_into(&self, target: &mut [u8], offset: usize, first: u32, value: &ConstantValue<'_>) -> bool {
        let mut end = 0;
        self.visit(offset, first, value, |at, _| end = end.max(at + 4));
        if end > target.len() {
            return false;
        }
        self.visit(offset, first, value, |at, word| target[at..at + 4].copy_from_slice(&word.to_le_bytes()));
        true
    }

    /// Calls `write(byte offset, word)` for each component of `value`.
    #[inline]
    fn visit(&self, offset: usize, first: u32, value: &ConstantValue<'_>, mut write: impl FnMut(usize, u32)) {
        let (columns, rows) = (usize::from(self.ty.columns), usize::from(self.ty.rows));
        let per = (columns * rows).max(1);
        let elements = value.element_count().unwrap_or(0);
        for element in 0..elements {
            let start = offset + (first as usize + element) * self.array_stride;
            for c in 0..columns {
                for r in 0..rows {
                    let index = element * per + if value.transpose { r * columns + c } else { c * rows + r };
                    let at = if columns == 1 {
                        start + r * 4
                    } else if self.row_major {
                        start + r * self.matrix_stride + c * 4
                    } else {
                        start + c * self.matrix_stride + r * 4
                    };
                    write(at, value.data.word(index));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constants::{ConstantData, ConstantType, ScalarKind, abi::value};

    #[test]
    fn member_writes_follow_strides_and_majority() {
        let m = MemberLayout {
            ty: ConstantType::matrix(2, 2),
            array_size: 1,
            array_stride: 0,
            matrix_stride: 16,
            row_major: false,
        };
        let v = value(ConstantType::matrix(2, 2), ConstantData::Float((&[1.0, 2.0, 3.0, 4.0][..]).into()));
        let at: Vec<usize> = m.writes(32, 0, &v).iter().map(|(at, _)| *at).collect();
        assert_eq!(at, [32, 36, 48, 52], "column-major: columns 16 bytes apart");
        let row_major = MemberLayout { row_major: true, ..m };
        let w = row_major.writes(0, 0, &v);
        assert_eq!(w[1], (16, 2.0f32.to_bits()), "element (column 0, row 1) is in the second row");
        let array = MemberLayout {
            ty: ConstantType::vector(ScalarKind::Float, 1),
            array_size: 3,
            array_stride: 16,
            matrix_stride: 0,
            row_major: false,
        };
        let v = value(ConstantType::vector(ScalarKind::Float, 1), ConstantData::Float((&[5.0, 6.0][..]).into()));
        let at: Vec<usize> = array.writes(0, 1, &v).iter().map(|(at, _)| *at).collect();
        assert_eq!(at, [16, 32], "std140 arrays: 16-byte stride, from element 1");
    }

    #[test]
    fn a_member_written_into_its_block_lands_where_its_layout_says_or_nowhere() {
        let array = MemberLayout {
            ty: ConstantType::vector(ScalarKind::Float, 2),
            array_size: 2,
            array_stride: 16,
            matrix_stride: 0,
            row_major: false,
        };
        let v =
            value(ConstantType::vector(ScalarKind::Float, 2), ConstantData::Float((&[1.0, 2.0, 3.0, 4.0][..]).into()));
        let mut block = [0u8; 40];
        assert!(array.write_into(&mut block, 8, 0, &v));
        let word = |at: usize| f32::from_le_bytes(block[at..at + 4].try_into().unwrap());
        assert_eq!([word(8), word(12), word(24), word(28)], [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(array.writes(8, 0, &v).len(), 4);
        // One word past the end: nothing written at all.
        let mut short = [0u8; 31];
        assert!(!array.write_into(&mut short, 8, 0, &v));
        assert_eq!(short, [0u8; 31]);
    }
}
