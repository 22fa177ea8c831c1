//! The mip levels a texture given one level needs, made by a box filter
//! on the host (wgpu has no mipmap generation of its own).

use xr_device::{TextureDesc, TextureFormat, XrError};

/// Every level of `desc` from `level0`: level 0 as given, each next one
/// the average of the 2 × 2 texels under it (clamped at an odd edge).
pub fn generate(desc: &TextureDesc, level0: &[u8]) -> Result<Vec<u8>, XrError> {
    type Read = fn(&[u8]) -> f32;
    type Write = fn(f32) -> Vec<u8>;
    let (read, write): (Read, Write) = match desc.format {
        TextureFormat::Rgba8 => (|b| f32::from(b[0]), |v| vec![v.round().clamp(0.0, 255.0) as u8]),
        TextureFormat::Rgba32Float => (|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]), |v| v.to_le_bytes().to_vec()),
        TextureFormat::Rgba16Float => {
            return Err(XrError::invalid_input(
                "the wgpu device system makes no mip levels of rgba16f textures: give every level",
            ));
        }
    };
    let channel = match desc.format {
        TextureFormat::Rgba8 => 1,
        _ => 4,
    };
    let mut all = level0.to_vec();
    let mut previous = level0.to_vec();
    for level in 1..desc.levels() {
        let (pw, ph) = desc.level_size(level - 1);
        let (w, h) = desc.level_size(level);
        let mut next = Vec::with_capacity(w as usize * h as usize * 4 * channel);
        for y in 0..h {
            for x in 0..w {
                for c in 0..4 {
                    let mut sum = 0.0;
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        let sx = (2 * x + dx).min(pw - 1) as usize;
                        let sy = (2 * y + dy).min(ph - 1) as usize;
                        let at = ((sy * pw as usize + sx) * 4 + c) * channel;
                        sum += read(&previous[at..at + channel]);
                    }
                    next.extend(write(sum / 4.0));
                }
            }
        }
        all.extend_from_slice(&next);
        previous = next;
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_level_averages_the_one_above() {
        let desc = TextureDesc { width: 2, height: 2, format: TextureFormat::Rgba8, mip_levels: 0, storage: false };
        let level0 = [0, 0, 0, 255, 100, 0, 0, 255, 0, 200, 0, 255, 0, 0, 40, 255];
        let all = generate(&desc, &level0).expect("generates");
        assert_eq!(all.len(), 16 + 4);
        assert_eq!(&all[16..], &[25, 50, 10, 255]);
    }
}
