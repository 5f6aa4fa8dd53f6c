//! Pieces of one-line messages: numbers, names and paths that print short and on one
//! line whatever they hold.
//!
//! Every error of the tool is one line naming the file and the problem, read by people
//! and by build scripts. A value taken from the input must not break that: a number
//! like `1e-300` must not print as three hundred digits, and a bone or file name with a
//! newline, an escape sequence or a right-to-left override must not split the line or
//! disguise the text around it.

use std::fmt;
use std::path::Path;

/// A number printed in the shortest form that reads back to the same value, with an
/// exponent when it is very large or very small (`4000000000`, `0.001`, `1e-300`,
/// `1e39`).
pub fn number(value: f64) -> Number {
    Number(Value::Double(value))
}

/// A single-precision number printed like [`number`]: the shortest form that reads
/// back to the same `f32` (`0.01`, not `0.009999999776482582`).
pub fn number32(value: f32) -> Number {
    Number(Value::Single(value))
}

/// See [`number`].
#[derive(Clone, Copy, Debug)]
pub struct Number(Value);

#[derive(Clone, Copy, Debug)]
enum Value {
    Double(f64),
    Single(f32),
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let magnitude = match self.0 {
            Value::Double(v) => v.abs(),
            Value::Single(v) => f64::from(v.abs()),
        };
        // Both forms are the shortest that round-trip; only the notation differs.
        let plain = magnitude == 0.0 || !magnitude.is_finite() || (1e-5..1e16).contains(&magnitude);
        match (self.0, plain) {
            (Value::Double(v), true) => write!(f, "{v}"),
            (Value::Double(v), false) => write!(f, "{v:e}"),
            (Value::Single(v), true) => write!(f, "{v}"),
            (Value::Single(v), false) => write!(f, "{v:e}"),
        }
    }
}

/// A name from the input (a bone, a clip, a key) with control and invisible
/// formatting characters escaped (`\n`, `\u{1b}`, `\u{202e}`), so that it stays on its
/// line and shows what it really holds.
pub fn name(text: &str) -> Name<'_> {
    Name(text)
}

/// See [`name`].
#[derive(Clone, Copy, Debug)]
pub struct Name<'a>(&'a str);

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_escaped(f, self.0)
    }
}

/// A path, escaped like [`name`]; bytes that are not UTF-8 print as `\xNN`.
pub fn path(path: &Path) -> PathText<'_> {
    PathText(path)
}

/// See [`path`].
#[derive(Clone, Copy, Debug)]
pub struct PathText<'a>(&'a Path);

impl fmt::Display for PathText<'_> {
    #[cfg(unix)]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use std::os::unix::ffi::OsStrExt as _;
        for chunk in self.0.as_os_str().as_bytes().utf8_chunks() {
            write_escaped(f, chunk.valid())?;
            for byte in chunk.invalid() {
                write!(f, "\\x{byte:02x}")?;
            }
        }
        Ok(())
    }

    #[cfg(not(unix))]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_escaped(f, &self.0.to_string_lossy())
    }
}

fn write_escaped(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    for c in text.chars() {
        if needs_escape(c) {
            write!(f, "{}", c.escape_default())?;
        } else {
            f.write_str(c.encode_utf8(&mut [0; 4]))?;
        }
    }
    Ok(())
}

/// Control characters, and the invisible characters that reorder or hide text
/// (bidirectional overrides and isolates, zero-width characters, the byte-order mark).
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short_and_round_trip() {
        for (v, text) in [
            (0.01, "0.01"),
            (4e9, "4000000000"),
            (1e-300, "1e-300"),
            (1e39, "1e39"),
            (-2.5e-7, "-2.5e-7"),
            (30.0, "30"),
            (0.0, "0"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "inf"),
        ] {
            assert_eq!(number(v).to_string(), text);
        }
        for v in [1e-300, 1.2345678901234567e-20, 3.4028234663852886e38, 0.1 + 0.2] {
            assert_eq!(number(v).to_string().parse::<f64>().unwrap(), v);
        }
        assert_eq!(number32(0.01).to_string(), "0.01");
        assert_eq!(number32(1e-40).to_string(), "1e-40");
        assert_eq!(number32(24.0).to_string(), "24");
    }

    #[test]
    fn names_and_paths_stay_on_one_line() {
        assert_eq!(name("arm\nleg\t\u{1b}[31m\u{202e}x").to_string(), "arm\\nleg\\t\\u{1b}[31m\\u{202e}x");
        assert_eq!(name("Épaule_gauche").to_string(), "Épaule_gauche");
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt as _;
            let p = Path::new(std::ffi::OsStr::from_bytes(b"dir/a\nb\xff.acl.sjson"));
            assert_eq!(path(p).to_string(), "dir/a\\nb\\xff.acl.sjson");
        }
    }
}
