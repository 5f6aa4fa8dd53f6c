//! A small reader for "simplified JSON" (SJSON), the syntax of ACL's text clips.
//!
//! SJSON differs from JSON in ways existing crates do not all accept: the top level
//! is a list of `key = value` pairs without braces, keys are bare words, `=` (or `:`)
//! separates keys from values, commas are optional, `//` and `/* */` comments are
//! allowed, and bare words (`true`, `float4f`) are values. Every value remembers its
//! line so that import errors can point at it.

use std::fmt;

/// Deepest nesting accepted; deeper input is refused rather than risking the stack.
const MAX_DEPTH: usize = 64;

/// A parsed value and the line (1-based) where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The value.
    pub value: Value,
    /// Line of its first character.
    pub line: u32,
}

/// An SJSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `true` / `false`.
    Bool(bool),
    /// A number, as written (decimal).
    Number(f64),
    /// A quoted string, or a bare word other than `true`/`false`.
    String(String),
    /// `[ … ]`.
    Array(Vec<Node>),
    /// `{ … }` or the top level: keys in file order.
    Object(Vec<(String, Node)>),
}

/// A syntax error with its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for SyntaxError {}

impl Node {
    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// Parses a whole document: `key = value` pairs at the top level (optionally wrapped
/// in braces). Duplicate keys in one object are an error.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut p = Parser { text: text.as_bytes(), pos: 0, line: 1, line_start: 0 };
    p.skip_trivia()?;
    let line = p.line;
    let value = if p.peek() == Some(b'{') {
        let v = p.value(0)?;
        p.skip_trivia()?;
        if p.peek().is_some() {
            return Err(p.error("unexpected text after the closing brace"));
        }
        v.value
    } else {
        Value::Object(p.members(None, 0)?)
    };
    Ok(Node { value, line })
}

/// A position in the text.
#[derive(Clone, Copy)]
struct Mark {
    line: u32,
    line_start: usize,
    pos: usize,
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
    line: u32,
    line_start: usize,
}

impl Parser<'_> {
    /// The current position, cheaply: the column is only counted if an error is
    /// actually reported (counting it eagerly is quadratic on long lines).
    fn mark(&self) -> Mark {
        Mark { line: self.line, line_start: self.line_start, pos: self.pos }
    }

    fn error(&self, message: impl Into<String>) -> SyntaxError {
        self.error_at(self.mark(), message)
    }

    fn error_at(&self, mark: Mark, message: impl Into<String>) -> SyntaxError {
        // Column in characters, not bytes.
        let start = mark.line_start.min(self.text.len());
        let end = mark.pos.clamp(start, self.text.len());
        let column = String::from_utf8_lossy(&self.text[start..end]).chars().count() as u32 + 1;
        SyntaxError { line: mark.line, column, message: message.into() }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn bump(&mut self) {
        if self.peek() == Some(b'\n') {
            self.line += 1;
            self.line_start = self.pos + 1;
        }
        self.pos += 1;
    }

    /// Skips white space and comments.
    fn skip_trivia(&mut self) -> Result<(), SyntaxError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r' | b'\n') => self.bump(),
                Some(b'/') if self.text.get(self.pos + 1) == Some(&b'/') => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.bump();
                    }
                }
                Some(b'/') if self.text.get(self.pos + 1) == Some(&b'*') => {
                    let start = self.mark();
                    self.bump();
                    self.bump();
                    loop {
                        match self.peek() {
                            None => return Err(self.error_at(start, "unterminated /* comment")),
                            Some(b'*') if self.text.get(self.pos + 1) == Some(&b'/') => {
                                self.bump();
                                self.bump();
                                break;
                            }
                            _ => self.bump(),
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// Members until `close` (or the end of input when `close` is `None`).
    fn members(&mut self, close: Option<u8>, depth: usize) -> Result<Vec<(String, Node)>, SyntaxError> {
        let mut members: Vec<(String, Node)> = Vec::new();
        loop {
            self.skip_trivia()?;
            match (self.peek(), close) {
                (None, None) => return Ok(members),
                (None, Some(_)) => return Err(self.error("unexpected end of file inside an object")),
                (Some(c), Some(cl)) if c == cl => {
                    self.bump();
                    return Ok(members);
                }
                (Some(b','), _) => {
                    self.bump();
                    continue;
                }
                _ => {}
            }
            let key_position = self.mark();
            let key = self.key()?;
            self.skip_trivia()?;
            match self.peek() {
                Some(b'=' | b':') => self.bump(),
                _ => return Err(self.error(format!("expected '=' after key '{key}'"))),
            }
            self.skip_trivia()?;
            let value = self.value(depth + 1)?;
            if members.iter().any(|(k, _)| *k == key) {
                return Err(self.error_at(key_position, format!("duplicate key '{key}'")));
            }
            members.push((key, value));
        }
    }

    fn key(&mut self) -> Result<String, SyntaxError> {
        match self.peek() {
            Some(b'"') => self.string(),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => Ok(self.word()),
            Some(c) => Err(self.error(format!("expected a key, found '{}'", char::from(c).escape_default()))),
            None => Err(self.error("expected a key, found the end of the file")),
        }
    }

    fn word(&mut self) -> String {
        let start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'-') {
            self.bump();
        }
        String::from_utf8_lossy(&self.text[start..self.pos]).into_owned()
    }

    fn value(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        let line = self.line;
        let value = match self.peek() {
            Some(b'{') => {
                self.bump();
                Value::Object(self.members(Some(b'}'), depth)?)
            }
            Some(b'[') => {
                self.bump();
                let mut items = Vec::new();
                loop {
                    self.skip_trivia()?;
                    match self.peek() {
                        None => return Err(self.error("unexpected end of file inside an array")),
                        Some(b']') => {
                            self.bump();
                            break;
                        }
                        Some(b',') => self.bump(),
                        _ => items.push(self.value(depth + 1)?),
                    }
                }
                Value::Array(items)
            }
            Some(b'"') => Value::String(self.string()?),
            Some(c) if c == b'-' || c == b'+' || c == b'.' || c.is_ascii_digit() => self.number()?,
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => match self.word().as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                w => Value::String(w.to_owned()),
            },
            Some(c) => return Err(self.error(format!("unexpected character '{}'", char::from(c).escape_default()))),
            None => return Err(self.error("expected a value, found the end of the file")),
        };
        Ok(Node { value, line })
    }

    fn number(&mut self) -> Result<Value, SyntaxError> {
        let start = self.pos;
        let mark = self.mark();
        // Hexadecimal integers (`0xFFFFFFFF`, used by ACL for "no output index").
        if self.peek() == Some(b'0') && matches!(self.text.get(self.pos + 1), Some(b'x' | b'X')) {
            self.bump();
            self.bump();
            let digits = self.pos;
            while matches!(self.peek(), Some(c) if c.is_ascii_hexdigit()) {
                self.bump();
            }
            let text = std::str::from_utf8(&self.text[digits..self.pos]).unwrap_or("");
            return u64::from_str_radix(text, 16)
                .map(|v| Value::Number(v as f64))
                .map_err(|_| self.error_at(mark, "malformed hexadecimal number"));
        }
        while matches!(self.peek(), Some(c) if c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E')) {
            self.bump();
        }
        let text = std::str::from_utf8(&self.text[start..self.pos]).unwrap_or("");
        text.parse::<f64>().map(Value::Number).map_err(|_| self.error_at(mark, format!("malformed number '{text}'")))
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        let start = self.mark();
        self.bump(); // opening quote
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None | Some(b'\n') => return Err(self.error_at(start, "unterminated string")),
                Some(b'"') => {
                    self.bump();
                    break;
                }
                Some(b'\\') => {
                    self.bump();
                    let c = self.peek().ok_or_else(|| self.error_at(start, "unterminated string"))?;
                    let decoded: &[u8] = match c {
                        b'"' => b"\"",
                        b'\\' => b"\\",
                        b'/' => b"/",
                        b'n' => b"\n",
                        b't' => b"\t",
                        b'r' => b"\r",
                        _ => return Err(self.error(format!("unknown escape '\\{}'", char::from(c).escape_default()))),
                    };
                    out.extend_from_slice(decoded);
                    self.bump();
                }
                Some(c) => {
                    out.push(c);
                    self.bump();
                }
            }
        }
        String::from_utf8(out).map_err(|_| self.error_at(start, "string is not valid UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_acl_style_documents() {
        let doc = parse(
            "version = 1 // comment\n/* block\n comment */ clip = { name = \"a\", num = -1.5e2 }\n\
             arr = [ [1, 2] [3 4], ] flag = true kind = float4f hex = 0xFFFFFFFF",
        )
        .unwrap();
        assert_eq!(doc.get("version").unwrap().value, Value::Number(1.0));
        assert_eq!(doc.get("clip").unwrap().get("num").unwrap().value, Value::Number(-150.0));
        assert_eq!(doc.get("clip").unwrap().line, 3);
        let Value::Array(items) = &doc.get("arr").unwrap().value else { panic!() };
        assert_eq!(items.len(), 2);
        assert_eq!(doc.get("flag").unwrap().value, Value::Bool(true));
        assert_eq!(doc.get("kind").unwrap().value, Value::String("float4f".into()));
        assert_eq!(doc.get("hex").unwrap().value, Value::Number(4294967295.0));
    }

    #[test]
    fn reports_position_of_errors() {
        let e = parse("a = 1\nb = [1, 2\n").unwrap_err();
        assert!(e.message.contains("end of file inside an array"), "{e}");
        let e = parse("a = 1\nb = @").unwrap_err();
        assert_eq!((e.line, e.column), (2, 5));
        let e = parse("a = 1\n  a = 2").unwrap_err();
        assert!(e.message.contains("duplicate key") && (e.line, e.column) == (2, 3), "{e}");
        assert!(parse("a = \"x").is_err());
        assert!(parse("a = 1.2.3").is_err());
        assert!(parse(&format!("a = {}", "[".repeat(200))).is_err());
    }
}
