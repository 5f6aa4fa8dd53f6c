//! A streaming reader for "simplified JSON" (SJSON), the syntax of ACL's text clips.
//!
//! SJSON differs from JSON in ways existing crates do not all accept: the top level
//! is a list of `key = value` pairs without braces, keys are bare words, `=` (or `:`)
//! separates keys from values, commas are optional, `//` and `/* */` comments are
//! allowed, and bare words (`true`, `float4f`) are values.
//!
//! The reader builds no tree. A clip's text holds millions of numbers, and a tree of
//! them costs several times the memory of the clip itself, all of it spent before the
//! clip's declared counts could even be checked. Instead the caller walks the text:
//! [`Reader::next_member`] and [`Reader::next_item`] step through objects and arrays,
//! [`Reader::number`] and [`Reader::string`] read leaves, and [`Reader::skip_value`]
//! checks the syntax of a value it does not need without keeping anything. Positions
//! are cheap to save and return to, so a caller can scan the document once and then
//! read its sections in the order it needs them.

use std::fmt;

use super::structural;

/// Deepest nesting accepted; deeper input is refused rather than risking the stack.
pub const MAX_DEPTH: usize = 64;

/// A syntax error with its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
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

/// A place in the text: a byte offset and the line it is on. The column is only
/// counted when an error is reported (counting it eagerly is quadratic on long lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    offset: usize,
    line: u32,
    line_start: usize,
}

/// What the next value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// `{ … }`.
    Object,
    /// `[ … ]`.
    Array,
    /// `"…"`.
    String,
    /// A decimal or `0x` hexadecimal number.
    Number,
    /// A bare word: `true`, `false`, `float4f`…
    Word,
}

impl ValueKind {
    /// How a message names this kind of value.
    pub fn describe(self) -> &'static str {
        match self {
            ValueKind::Object => "an object",
            ValueKind::Array => "a list",
            ValueKind::String => "a string",
            ValueKind::Number => "a number",
            ValueKind::Word => "a word",
        }
    }
}

/// A key of an object and where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    /// The key as written (quotes removed).
    pub name: String,
    /// Its first character.
    pub position: Position,
}

/// Walks SJSON text. Every method skips the white space and comments before what it
/// reads.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    /// The text, as a `str` for slicing tokens and as bytes for scanning.
    source: &'a str,
    text: &'a [u8],
    offset: usize,
    line: u32,
    line_start: usize,
}

/// The UTF-8 byte-order mark some editors put at the start of a file.
const BOM: &[u8] = "\u{feff}".as_bytes();

impl<'a> Reader<'a> {
    /// A reader at the start of `text`. A byte-order mark is skipped (columns on the
    /// first line are counted after it, as editors show them).
    pub fn new(text: &'a str) -> Reader<'a> {
        let start = if text.as_bytes().starts_with(BOM) { BOM.len() } else { 0 };
        Reader { source: text, text: text.as_bytes(), offset: start, line: 1, line_start: start }
    }

    /// Where the reader stands.
    pub fn position(&self) -> Position {
        Position { offset: self.offset, line: self.line, line_start: self.line_start }
    }

    /// Returns to a position saved earlier.
    pub fn seek(&mut self, position: Position) {
        self.offset = position.offset;
        self.line = position.line;
        self.line_start = position.line_start;
    }

    /// Line and column (1-based, in characters) of `position`.
    pub fn line_column(&self, position: Position) -> (u32, u32) {
        let start = position.line_start.min(self.text.len());
        let end = position.offset.clamp(start, self.text.len());
        let column = String::from_utf8_lossy(&self.text[start..end]).chars().count() as u32 + 1;
        (position.line, column)
    }

    /// An error at `position`.
    pub fn error_at(&self, position: Position, message: impl Into<String>) -> SyntaxError {
        let (line, column) = self.line_column(position);
        SyntaxError { line, column, message: message.into() }
    }

    /// An error where the reader stands.
    pub fn error(&self, message: impl Into<String>) -> SyntaxError {
        self.error_at(self.position(), message)
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.offset).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.text.get(self.offset + ahead).copied()
    }

    fn bump(&mut self) {
        if self.peek() == Some(b'\n') {
            self.line += 1;
            self.line_start = self.offset + 1;
        }
        self.offset += 1;
    }

    /// Skips white space and comments.
    pub fn skip_trivia(&mut self) -> Result<(), SyntaxError> {
        loop {
            // White space, the common case, in a tight loop over a local index.
            let mut i = self.offset;
            while let Some(&c) = self.text.get(i) {
                match c {
                    b' ' | b'\t' | b'\r' => i += 1,
                    b'\n' => {
                        i += 1;
                        self.line += 1;
                        self.line_start = i;
                    }
                    _ => break,
                }
            }
            self.offset = i;
            match self.peek() {
                Some(b'/') if self.peek_at(1) == Some(b'/') => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.bump();
                    }
                }
                Some(b'/') if self.peek_at(1) == Some(b'*') => {
                    let start = self.position();
                    self.bump();
                    self.bump();
                    loop {
                        match self.peek() {
                            None => return Err(self.error_at(start, "unterminated /* comment")),
                            Some(b'*') if self.peek_at(1) == Some(b'/') => {
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

    /// [`Reader::skip_trivia`] with the common case inline: between the values of a
    /// sample list stand a space or two, or nothing (a clip holds a million such
    /// gaps, and the full skip cost more per gap than converting a number). A line
    /// break or a comment takes the full skip, which counts lines.
    #[inline(always)]
    fn skip_blanks(&mut self) -> Result<(), SyntaxError> {
        let mut i = self.offset;
        while matches!(self.text.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        self.offset = i;
        match self.text.get(i) {
            Some(b'\n' | b'\r' | b'/') => self.skip_trivia(),
            _ => Ok(()),
        }
    }

    /// Is there nothing but white space and comments left?
    pub fn at_end(&mut self) -> Result<bool, SyntaxError> {
        self.skip_trivia()?;
        Ok(self.peek().is_none())
    }

    /// Starts the document: returns the closing brace to expect when the top level is
    /// wrapped in `{ }`, `None` when it is a bare list of members.
    pub fn begin_document(&mut self) -> Result<Option<u8>, SyntaxError> {
        self.skip_trivia()?;
        if self.peek() == Some(b'{') {
            self.bump();
            Ok(Some(b'}'))
        } else {
            Ok(None)
        }
    }

    /// After the last member of a document that was wrapped in braces: nothing may
    /// follow.
    pub fn end_document(&mut self) -> Result<(), SyntaxError> {
        if self.at_end()? {
            Ok(())
        } else {
            Err(self.error("unexpected text after the closing brace"))
        }
    }

    /// What the next value is, without consuming it.
    pub fn peek_value(&mut self) -> Result<ValueKind, SyntaxError> {
        self.skip_trivia()?;
        match self.peek() {
            Some(b'{') => Ok(ValueKind::Object),
            Some(b'[') => Ok(ValueKind::Array),
            Some(b'"') => Ok(ValueKind::String),
            Some(c) if starts_number(c) => Ok(ValueKind::Number),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => Ok(ValueKind::Word),
            Some(c) => Err(self.error(format!("unexpected character '{}'", self.char_at_point(c)))),
            None => Err(self.error("expected a value, found the end of the file")),
        }
    }

    /// The character at the reader (for messages), escaped.
    fn char_at_point(&self, first: u8) -> String {
        let rest = &self.text[self.offset..self.text.len().min(self.offset + 4)];
        let c = String::from_utf8_lossy(rest).chars().next().unwrap_or(char::from(first));
        crate::message::name(c.encode_utf8(&mut [0; 4])).to_string()
    }

    /// Enters an object: consumes `{`.
    pub fn begin_object(&mut self) -> Result<(), SyntaxError> {
        self.expect(b'{', "'{'")
    }

    /// Enters an array: consumes `[`.
    pub fn begin_array(&mut self) -> Result<(), SyntaxError> {
        self.expect(b'[', "'['")
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), SyntaxError> {
        self.skip_trivia()?;
        if self.peek() == Some(byte) {
            self.bump();
            Ok(())
        } else {
            Err(self.error(format!("expected {what}")))
        }
    }

    /// The next key of the object being read, with its `=` or `:` consumed, so that
    /// the reader stands before its value; `None` after the closing `close` (or at the
    /// end of the text when `close` is `None`: the top level of a document).
    pub fn next_member(&mut self, close: Option<u8>) -> Result<Option<Key>, SyntaxError> {
        loop {
            self.skip_trivia()?;
            match (self.peek(), close) {
                (None, None) => return Ok(None),
                (None, Some(_)) => return Err(self.error("unexpected end of file inside an object")),
                (Some(c), Some(cl)) if c == cl => {
                    self.bump();
                    return Ok(None);
                }
                (Some(b','), _) => self.bump(),
                _ => break,
            }
        }
        let position = self.position();
        let name = match self.peek() {
            Some(b'"') => self.string()?,
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => self.word().to_owned(),
            Some(c) => return Err(self.error(format!("expected a key, found '{}'", self.char_at_point(c)))),
            None => return Err(self.error("expected a key, found the end of the file")),
        };
        self.skip_trivia()?;
        match self.peek() {
            Some(b'=' | b':') => self.bump(),
            _ => return Err(self.error(format!("expected '=' after key '{}'", crate::message::name(&name)))),
        }
        Ok(Some(Key { name, position }))
    }

    /// Steps to the next item of the array being read: `true` when the reader stands
    /// before one, `false` after the closing `]`.
    pub fn next_item(&mut self) -> Result<bool, SyntaxError> {
        loop {
            self.skip_trivia()?;
            match self.peek() {
                None => return Err(self.error("unexpected end of file inside a list")),
                Some(b']') => {
                    self.bump();
                    return Ok(false);
                }
                Some(b',') => self.bump(),
                _ => return Ok(true),
            }
        }
    }

    /// Skips one value, checking its syntax, keeping nothing.
    pub fn skip_value(&mut self) -> Result<(), SyntaxError> {
        self.skip_nested(1)
    }

    fn skip_nested(&mut self, depth: usize) -> Result<(), SyntaxError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        match self.peek_value()? {
            ValueKind::Object => {
                self.bump();
                while self.next_member(Some(b'}'))?.is_some() {
                    self.skip_nested(depth + 1)?;
                }
            }
            ValueKind::Array => {
                self.bump();
                loop {
                    // Runs of plain numbers (most of a clip) are checked in a tight loop.
                    self.skip_numbers()?;
                    if !self.next_item()? {
                        break;
                    }
                    self.skip_nested(depth + 1)?;
                }
            }
            ValueKind::String => {
                self.string()?;
            }
            ValueKind::Number => self.skip_number()?,
            ValueKind::Word => {
                self.word();
            }
        }
        Ok(())
    }

    /// Skips the array or object at the reader by its brackets alone, checking
    /// nothing between them, and notes where each object directly inside an array
    /// starts (up to `max_objects`; with more, `objects` is left empty). Returns
    /// `false`, with the reader where it was, when the value is not an array or
    /// object or its brackets do not close cleanly (end of text, an unterminated
    /// string or comment, nesting deeper than [`MAX_DEPTH`]): the caller then skips
    /// it with [`Reader::skip_value`], which says what is wrong.
    ///
    /// On a value [`Reader::skip_value`] accepts, this stops where it stops, on the
    /// same line, several times faster (a tight loop over the bytes that matter:
    /// brackets, quotes, slashes and newlines). On one it refuses, it may stop
    /// anywhere: a caller that uses this must read every value inside with checking
    /// readers later, or check it with [`Reader::skip_value`] before reporting any
    /// other error, so that the first syntax error in the document is still the one
    /// reported.
    pub fn skip_unchecked(&mut self, objects: &mut Vec<Position>, max_objects: usize) -> bool {
        objects.clear();
        if self.skip_trivia().is_err() || !matches!(self.peek(), Some(b'[' | b'{')) {
            return false;
        }
        let text = self.text;
        let (mut i, mut line, mut line_start) = (self.offset, self.line, self.line_start);
        // Brackets open, and whether the outermost one is an array (its objects are
        // the ones noted).
        let mut depth = 0usize;
        let outer_array = self.peek() == Some(b'[');
        let mut noting = true;
        loop {
            i = structural::next(text, i);
            let Some(&c) = text.get(i) else { return false };
            match c {
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return false;
                    }
                    if c == b'{' && depth == 2 && outer_array && noting {
                        if objects.len() == max_objects {
                            objects.clear();
                            noting = false;
                        } else {
                            objects.push(Position { offset: i, line, line_start });
                        }
                    }
                    i += 1;
                }
                b']' | b'}' => {
                    depth -= 1;
                    i += 1;
                    if depth == 0 {
                        break;
                    }
                }
                b'\n' => {
                    i += 1;
                    line += 1;
                    line_start = i;
                }
                b'"' => {
                    // A string ends on its line; a backslash escapes the next byte.
                    i += 1;
                    loop {
                        match text.get(i) {
                            None | Some(b'\n') => return false,
                            Some(b'"') => break,
                            Some(b'\\') => i += 2,
                            Some(_) => i += 1,
                        }
                    }
                    i += 1;
                }
                b'/' => match text.get(i + 1) {
                    // A line comment: its newline is counted by the next round.
                    Some(b'/') => {
                        while !matches!(text.get(i), None | Some(b'\n')) {
                            i += 1;
                        }
                    }
                    Some(b'*') => {
                        i += 2;
                        loop {
                            match text.get(i) {
                                None => return false,
                                Some(b'*') if text.get(i + 1) == Some(&b'/') => break,
                                Some(b'\n') => {
                                    i += 1;
                                    line += 1;
                                    line_start = i;
                                }
                                Some(_) => i += 1,
                            }
                        }
                        i += 2;
                    }
                    // Not a comment: malformed, and left to the checking reader.
                    _ => i += 1,
                },
                _ => i += 1,
            }
        }
        self.offset = i;
        self.line = line;
        self.line_start = line_start;
        true
    }

    /// Skips the numbers, white space, comments and commas at the reader, checking
    /// each number as [`Reader::skip_value`] does; stops before anything else.
    fn skip_numbers(&mut self) -> Result<(), SyntaxError> {
        loop {
            self.skip_trivia()?;
            match self.peek() {
                Some(b',') => self.offset += 1,
                Some(c) if starts_number(c) => match plain_number_end(self.text, self.offset) {
                    Some(end) => self.offset = end,
                    None => self.skip_number()?,
                },
                _ => return Ok(()),
            }
        }
    }

    /// Skips the number token at the reader, checked, not converted (the first pass
    /// over a clip skips millions).
    fn skip_number(&mut self) -> Result<(), SyntaxError> {
        let start = self.position();
        let token = self.number_token();
        if is_number(token) {
            Ok(())
        } else {
            Err(self.error_at(start, format!("malformed number '{}'", crate::message::name(token))))
        }
    }

    /// A list of exactly `N` plain decimal numbers, read in one tight loop: the
    /// common case of a clip's samples. `None`, with the reader where it was, when
    /// the next value is anything else (another kind, a hexadecimal or malformed
    /// number, another count), so that the caller's general path reads it and
    /// reports what is wrong.
    pub fn plain_numbers<const N: usize>(&mut self) -> Option<[f64; N]> {
        let saved = self.position();
        let values = self.try_plain_numbers::<N>();
        if values.is_none() {
            self.seek(saved);
        }
        values
    }

    fn try_plain_numbers<const N: usize>(&mut self) -> Option<[f64; N]> {
        self.skip_trivia().ok()?;
        if self.peek() != Some(b'[') {
            return None;
        }
        self.offset += 1;
        let mut out = [0.0; N];
        let mut found = 0;
        loop {
            self.skip_blanks().ok()?;
            match self.peek()? {
                b',' => self.offset += 1,
                b']' => {
                    self.offset += 1;
                    return (found == N).then_some(out);
                }
                c if starts_number(c) => {
                    let (value, end) = plain_number(self.text, self.offset)?;
                    self.offset = end;
                    *out.get_mut(found)? = value;
                    found += 1;
                }
                _ => return None,
            }
        }
    }

    /// A bare word (`[A-Za-z_][A-Za-z0-9_.-]*`).
    pub fn word(&mut self) -> &'a str {
        let _ = self.skip_trivia();
        let start = self.offset;
        while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'-') {
            self.bump();
        }
        // Only ASCII was consumed: both ends are character boundaries.
        self.source.get(start..self.offset).unwrap_or_default()
    }

    /// The characters of a number token (none of them a newline), consumed.
    fn number_token(&mut self) -> &'a str {
        let start = self.offset;
        let text = self.text;
        let mut i = start;
        if text.get(i) == Some(&b'0') && matches!(text.get(i + 1), Some(b'x' | b'X')) {
            i += 2;
            while text.get(i).is_some_and(u8::is_ascii_hexdigit) {
                i += 1;
            }
        } else {
            while text.get(i).is_some_and(|&c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E')) {
                i += 1;
            }
        }
        self.offset = i;
        self.source.get(start..i).unwrap_or_default()
    }

    /// A number: decimal (`-1.5e2`) or hexadecimal integer (`0xFFFFFFFF`, which ACL
    /// uses for "no output index").
    pub fn number(&mut self) -> Result<f64, SyntaxError> {
        self.skip_trivia()?;
        let start = self.position();
        let token = self.number_token();
        let value = match token.strip_prefix("0x").or_else(|| token.strip_prefix("0X")) {
            Some(digits) => u64::from_str_radix(digits, 16).map(|v| v as f64).ok(),
            None => token.parse::<f64>().ok(),
        };
        value.ok_or_else(|| match token.get(..2) {
            Some("0x" | "0X") => self.error_at(start, "malformed hexadecimal number"),
            _ => self.error_at(start, format!("malformed number '{}'", crate::message::name(token))),
        })
    }

    /// A quoted string, escapes decoded.
    pub fn string(&mut self) -> Result<String, SyntaxError> {
        self.skip_trivia()?;
        let start = self.position();
        if self.peek() != Some(b'"') {
            return Err(self.error("expected a string"));
        }
        self.bump();
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
                        _ => return Err(self.error(format!("unknown escape '\\{}'", self.char_at_point(c)))),
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
        // The text is a `str` and only whole escapes were replaced: still UTF-8.
        String::from_utf8(out).map_err(|_| self.error_at(start, "string is not valid UTF-8"))
    }
}

/// Whether a value starting with `c` is a number.
fn starts_number(c: u8) -> bool {
    c == b'-' || c == b'+' || c == b'.' || c.is_ascii_digit()
}

/// Where the plain decimal number at `text[i..]` ends (`-1.25e-3`: an optional sign,
/// digits with at most one point, at least one digit, an optional exponent), checked
/// in one pass over its characters; `None` when what stands there is anything else
/// (hexadecimal, malformed, or a well-formed start followed by more number
/// characters), which [`Reader::number_token`] and [`is_number`] then take apart.
/// Whatever this accepts, they accept as the same token.
#[inline]
fn plain_number_end(text: &[u8], i: usize) -> Option<usize> {
    let end = decimal_end(text, i)?;
    match text.get(end) {
        Some(b'0'..=b'9' | b'+' | b'-' | b'.' | b'e' | b'E' | b'x' | b'X') => None,
        _ => Some(end),
    }
}

/// The plain decimal number at `text[i..]` ([`plain_number_end`]'s grammar and
/// verdict) and where it ends, read in one pass: a text clip's millions of samples
/// were each scanned to check them, then scanned again to convert them.
/// `fast_float2` rounds correctly, as `str::parse` does, so the value is the same.
#[inline]
fn plain_number(text: &[u8], i: usize) -> Option<(f64, usize)> {
    let rest = text.get(i..)?;
    // What `fast_float2` reads beyond the grammar (`inf`, `nan`) starts otherwise.
    let sign = usize::from(matches!(rest.first(), Some(b'+' | b'-')));
    if !matches!(rest.get(sign), Some(b'0'..=b'9' | b'.')) {
        return None;
    }
    let (value, length) = fast_float2::parse_partial::<f64, _>(rest).ok()?;
    let end = i + length;
    match text.get(end) {
        // An exponent without digits, a second point, hexadecimal: the general path.
        Some(b'0'..=b'9' | b'+' | b'-' | b'.' | b'e' | b'E' | b'x' | b'X') => None,
        _ => Some((value, end)),
    }
}

/// Whether `token` (from [`Reader::number_token`]) reads as a number: what
/// [`Reader::number`] accepts, checked without converting.
fn is_number(token: &str) -> bool {
    if let Some(digits) = token.strip_prefix("0x").or_else(|| token.strip_prefix("0X")) {
        // What `u64::from_str_radix` takes: any number of leading zeros, then at most
        // 16 digits (the fuzzer found `0X0` and 16 more digits read by one path and
        // refused by the other).
        return !digits.is_empty() && digits.trim_start_matches('0').len() <= 16;
    }
    decimal_end(token.as_bytes(), 0) == Some(token.len())
}

/// The end of the longest decimal number (the grammar of [`plain_number_end`])
/// starting at `text[i]`, or `None` when none starts there: no digit in the
/// mantissa, or an exponent without digits.
#[inline]
fn decimal_end(text: &[u8], mut i: usize) -> Option<usize> {
    let digits = |i: &mut usize| {
        let start = *i;
        while text.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    i += usize::from(matches!(text.get(i), Some(b'+' | b'-')));
    let mut mantissa = digits(&mut i);
    if text.get(i) == Some(&b'.') {
        i += 1;
        mantissa += digits(&mut i);
    }
    if mantissa == 0 {
        return None;
    }
    if matches!(text.get(i), Some(b'e' | b'E')) {
        i += 1;
        i += usize::from(matches!(text.get(i), Some(b'+' | b'-')));
        if digits(&mut i) == 0 {
            return None;
        }
    }
    Some(i)
}

/// Checks the syntax of a whole document: members at the top level (optionally
/// wrapped in braces), every value well formed. Keeps nothing.
pub fn check(text: &str) -> Result<(), SyntaxError> {
    let mut reader = Reader::new(text);
    let close = reader.begin_document()?;
    while reader.next_member(close)?.is_some() {
        reader.skip_value()?;
    }
    if close.is_some() {
        reader.end_document()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_acl_style_documents() {
        let text = "\u{feff}version = 1 // comment\n/* block\n comment */ clip = { name = \"a\", num = -1.5e2 }\n\
                    arr = [ [1, 2] [3 4], ] flag = true kind = float4f hex = 0xFFFFFFFF";
        check(text).unwrap();
        let mut r = Reader::new(text);
        assert_eq!(r.begin_document().unwrap(), None);
        let key = r.next_member(None).unwrap().unwrap();
        assert_eq!(key.name, "version");
        assert_eq!(r.line_column(key.position), (1, 1), "the byte-order mark is not a column");
        assert_eq!(r.number().unwrap(), 1.0);
        assert_eq!(r.next_member(None).unwrap().unwrap().name, "clip");
        assert_eq!(r.peek_value().unwrap(), ValueKind::Object);
        r.begin_object().unwrap();
        assert_eq!(r.next_member(Some(b'}')).unwrap().unwrap().name, "name");
        assert_eq!(r.string().unwrap(), "a");
        let num = r.next_member(Some(b'}')).unwrap().unwrap();
        assert_eq!(r.line_column(num.position), (3, 34));
        assert_eq!(r.number().unwrap(), -150.0);
        assert!(r.next_member(Some(b'}')).unwrap().is_none());
        assert_eq!(r.next_member(None).unwrap().unwrap().name, "arr");
        r.begin_array().unwrap();
        let mut items = 0;
        while r.next_item().unwrap() {
            r.skip_value().unwrap();
            items += 1;
        }
        assert_eq!(items, 2);
        assert_eq!(r.next_member(None).unwrap().unwrap().name, "flag");
        assert_eq!(r.word(), "true");
        assert_eq!(r.next_member(None).unwrap().unwrap().name, "kind");
        let saved = r.position();
        assert_eq!(r.word(), "float4f");
        r.seek(saved);
        assert_eq!(r.peek_value().unwrap(), ValueKind::Word);
        r.word();
        r.next_member(None).unwrap().unwrap();
        assert_eq!(r.number().unwrap(), 4294967295.0);
        assert!(r.next_member(None).unwrap().is_none());
    }

    #[test]
    fn the_plain_number_fast_path_reads_what_the_general_path_reads_or_steps_aside() {
        // Read: the same values as number() gives, comments and commas anywhere.
        let mut r = Reader::new(" [ 1, -2.5e1 /* c */ ,\n +.5 // d\n ] x");
        assert_eq!(r.plain_numbers::<3>(), Some([1.0, -25.0, 0.5]));
        assert_eq!(r.word(), "x");
        assert_eq!(r.position().line, 3, "lines are counted on the fast path too");
        // Anything else leaves the reader where it was, for the general path.
        for text in [
            "[1, 2]",
            "[1, 2, 3, 4]",
            "[1, 0x10, 3]",
            "[1, \"2\", 3]",
            "[1.2.3, 2, 3]",
            "[1, [2], 3]",
            "{}",
            "[1, 2, 3",
        ] {
            let mut r = Reader::new(text);
            let before = r.position();
            assert_eq!(r.plain_numbers::<3>(), None, "{text}");
            assert_eq!(r.position(), before, "{text}");
        }
    }

    #[test]
    fn the_one_pass_number_check_agrees_with_the_token_and_its_check() {
        // Every string of up to five characters from the number alphabet and a few
        // neighbours: when the one-pass check accepts, the general path cuts the same
        // token and accepts it too.
        let mut accepted = 0;
        for text in every_string(b"01+-.eEx ,", 5) {
            let text = String::from_utf8(text).unwrap();
            if let Some(end) = plain_number_end(text.as_bytes(), 0) {
                let mut r = Reader::new(&text);
                let token = r.number_token();
                assert_eq!(token.len(), end, "{text:?}");
                assert!(is_number(token), "{text:?}");
                accepted += 1;
            }
        }
        assert!(accepted > 1000, "{accepted}");
    }

    #[test]
    fn hexadecimal_numbers_are_checked_as_they_are_read() {
        // Leading zeros do not count towards the 16 digits of a `u64`; a 17th
        // significant digit is refused by both.
        for (token, value) in [
            ("0x0", Some(0.0)),
            ("0X07454784761731403", Some(0x7454784761731403u64 as f64)),
            ("0x0000000000000000000000FFFFFFFFFFFFFFFF", Some(u64::MAX as f64)),
            ("0x10000000000000000", None),
            ("0x", None),
        ] {
            let mut r = Reader::new(token);
            assert_eq!(r.number().ok(), value, "{token}");
            assert_eq!(is_number(token), value.is_some(), "{token}");
            assert_eq!(check(&format!("a = {token}")).is_ok(), value.is_some(), "{token}");
        }
    }

    /// Every string of 1 to `max_len` bytes of `alphabet`.
    fn every_string(alphabet: &[u8], max_len: u32) -> impl Iterator<Item = Vec<u8>> + '_ {
        (1..=max_len).flat_map(move |len| {
            (0..alphabet.len().pow(len)).map(move |mut code| {
                (0..len)
                    .map(|_| {
                        let c = alphabet[code % alphabet.len()];
                        code /= alphabet.len();
                        c
                    })
                    .collect()
            })
        })
    }

    /// The one-pass reader of the samples agrees with the checking scan and
    /// `str::parse`: on every short string of number characters, and on long
    /// numbers whose rounding is hard (17 to 25 digits, halfway cases, the ends of
    /// the range).
    #[test]
    fn one_pass_numbers_agree_with_the_scan_and_the_standard_parser() {
        let reference = |text: &[u8]| {
            plain_number_end(text, 0)
                .map(|end| (std::str::from_utf8(&text[..end]).unwrap().parse::<f64>().unwrap().to_bits(), end))
        };
        let one_pass = |text: &[u8]| plain_number(text, 0).map(|(v, end)| (v.to_bits(), end));
        for text in every_string(b"01+-.eExin ,", 5) {
            assert_eq!(one_pass(&text), reference(&text), "{:?}", String::from_utf8_lossy(&text));
        }
        let long = [
            "-0.27054829454033996 ",
            "0.27054835449120235]",
            "9007199254740993",
            "2.2250738585072011e-308,",
            "1.7976931348623157e308",
            "1.7976931348623159e308",
            "4.9406564584124654e-324",
            "2.4703282292062327e-324",
            "0.1000000000000000055511151231257827",
            "123456789012345678901234567890e-10",
            "+.5e+3\n",
            "1e999",
            "-0.0",
        ];
        for text in long {
            assert!(reference(text.as_bytes()).is_some(), "{text}");
            assert_eq!(one_pass(text.as_bytes()), reference(text.as_bytes()), "{text}");
        }
    }

    #[test]
    fn skipping_checks_numbers_as_reading_does() {
        for token in ["1", "-1.5e2", "+.5", "5.", "1E-300", "0x1F", "0XFFFFFFFF", "1e999"] {
            assert!(is_number(token), "{token}");
            assert!(Reader::new(token).number().is_ok(), "{token}");
        }
        for token in ["1.2.3", "-", ".", "1e", "1e+", "--1", "1-2", "0x", "0x12345678901234567", "e5"] {
            assert!(!is_number(token), "{token}");
            let mut r = Reader::new(token);
            if r.peek_value() == Ok(ValueKind::Number) {
                assert!(r.number().is_err(), "{token}");
            }
        }
    }

    #[test]
    fn reports_position_of_errors() {
        let e = check("a = 1\nb = [1, 2\n").unwrap_err();
        assert!(e.message.contains("end of file inside a list"), "{e}");
        let e = check("a = 1\nb = @").unwrap_err();
        assert_eq!((e.line, e.column), (2, 5));
        let e = check("a = 1\nb = é").unwrap_err();
        assert!(e.message.contains("'é'"), "{e}");
        assert!(check("a = \"x").is_err());
        assert!(check("a = 1.2.3").is_err());
        assert!(check(&format!("a = {}", "[".repeat(200))).unwrap_err().message.contains("nesting"));
        assert!(check("{ a = 1 } b").unwrap_err().message.contains("after the closing brace"));
        assert!(check("a = /* open").unwrap_err().message.contains("unterminated"));
    }
}
