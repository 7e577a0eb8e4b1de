//! Base64url (RFC 4648 §5) without padding, strict in what it accepts.
//!
//! The alphabet is `A–Z a–z 0–9 - _`, all of them unreserved in URLs, so a
//! payload needs no percent-encoding anywhere. Decoding rejects any other
//! character (padding `=` included), a length that cannot come from whole bytes,
//! and a last character whose unused low bits are not zero, so every byte
//! string has exactly one spelling.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Why a base64url string could not be decoded: the byte offset of the first bad character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Base64Error {
    /// Byte offset of the offending character (the string's length when it is cut short).
    pub pos: usize,
}

/// Encodes bytes as base64url without padding.
pub(crate) fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            let sextet = (n >> (18 - 6 * i)) & 0x3f;
            out.push(char::from(ALPHABET[sextet as usize]));
        }
    }
    out
}

/// The 6-bit value of one alphabet character.
fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'-' => Some(62),
        b'_' => Some(63),
        _ => None,
    }
}

/// Decodes unpadded base64url; see the module docs for what is rejected.
pub(crate) fn decode(text: &str) -> Result<Vec<u8>, Base64Error> {
    let bytes = text.as_bytes();
    if let Some(pos) = bytes.iter().position(|&b| sextet(b).is_none()) {
        return Err(Base64Error { pos });
    }
    if bytes.len() % 4 == 1 {
        return Err(Base64Error { pos: bytes.len() });
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3 + 2);
    for (c, chunk) in bytes.chunks(4).enumerate() {
        let mut n: u32 = 0;
        for (i, &ch) in chunk.iter().enumerate() {
            let v = sextet(ch).ok_or(Base64Error { pos: c * 4 + i })?;
            n |= u32::from(v) << (18 - 6 * i);
        }
        // A chunk of k characters carries k - 1 whole bytes; the bits below them
        // must be zero so that each byte string has a single spelling.
        let whole = chunk.len() - 1;
        if n & ((1u32 << (24 - 8 * whole)) - 1) != 0 {
            return Err(Base64Error {
                pos: c * 4 + chunk.len() - 1,
            });
        }
        let b = n.to_be_bytes();
        out.extend_from_slice(&b[1..1 + whole]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc4648_vectors_without_padding() {
        let cases = [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, coded) in cases {
            assert_eq!(encode(plain.as_bytes()), coded);
            assert_eq!(decode(coded).expect(coded), plain.as_bytes());
        }
    }

    #[test]
    fn url_safe_alphabet_is_used() {
        assert_eq!(encode(&[0xfb, 0xff, 0xbf]), "-_-_");
        assert_eq!(decode("-_-_").expect("valid"), vec![0xfb, 0xff, 0xbf]);
    }

    #[test]
    fn every_byte_string_round_trips() {
        let mut data = Vec::new();
        for len in 0..70usize {
            assert_eq!(decode(&encode(&data)).expect("own output"), data);
            data.push((len * 37 % 256) as u8);
        }
    }

    #[test]
    fn rejects_bad_characters_at_their_position() {
        assert_eq!(decode("Zm9v=").unwrap_err().pos, 4);
        assert_eq!(decode("Zm+v").unwrap_err().pos, 2);
        assert_eq!(decode("Zm/v").unwrap_err().pos, 2);
        assert_eq!(decode("Zm9vY g").unwrap_err().pos, 5);
        assert_eq!(decode("Zé").unwrap_err().pos, 1);
    }

    #[test]
    fn rejects_impossible_length_and_non_canonical_tails() {
        assert_eq!(decode("Zm9vY").unwrap_err().pos, 5);
        // "Zh" would carry a stray low bit after the byte 'f'.
        assert_eq!(decode("Zh").unwrap_err().pos, 1);
        assert_eq!(decode("Zm9").unwrap_err().pos, 2);
    }
}
