//! Where a key path is in JSON text: the line an error message names.

/// The 1-based line of the deepest part of `path` found in `text` (segments are object keys,
/// or `[i]` for a list item): the line of that key, or of that item's first character.
/// `None` when the text is not JSON or not even the first segment is found.
pub(crate) fn line_of(text: &str, path: &[String]) -> Option<usize> {
    let mut scan = Scanner {
        bytes: text.as_bytes(),
        at: 0,
        mark: 0,
    };
    let mut found = None;
    for segment in path {
        scan.space();
        let index = segment
            .strip_prefix('[')
            .and_then(|s| s.strip_suffix(']'))
            .and_then(|s| s.parse::<usize>().ok());
        let ok = match index {
            Some(i) => scan.enter_item(i),
            None => scan.enter_key(segment),
        };
        if !ok {
            break;
        }
        found = Some(scan.line());
    }
    found
}

/// A cursor over JSON text known to be valid (errors just stop the search).
struct Scanner<'t> {
    bytes: &'t [u8],
    at: usize,
    /// Where the last key or item entered starts: its line is reported.
    mark: usize,
}

impl Scanner<'_> {
    fn line(&self) -> usize {
        1 + self
            .bytes
            .iter()
            .take(self.mark)
            .filter(|b| **b == b'\n')
            .count()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        self.space();
        if self.peek() == Some(byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// A string starting here; returns its decoded text.
    fn string(&mut self) -> Option<String> {
        let start = self.at;
        if self.peek() != Some(b'"') {
            return None;
        }
        self.at += 1;
        while let Some(b) = self.peek() {
            self.at += 1;
            match b {
                b'\\' => self.at += 1,
                b'"' => {
                    let raw = self.bytes.get(start..self.at)?;
                    return serde_json::from_slice(raw).ok();
                }
                _ => {}
            }
        }
        None
    }

    /// Skips one value starting here (after spaces).
    fn skip_value(&mut self) -> bool {
        self.space();
        let mut depth = 0usize;
        loop {
            self.space();
            match self.peek() {
                None => return false,
                Some(b'"') => {
                    if self.string().is_none() {
                        return false;
                    }
                }
                Some(b'{' | b'[') => {
                    depth += 1;
                    self.at += 1;
                    continue;
                }
                Some(b'}' | b']') => {
                    if depth == 0 {
                        return false;
                    }
                    depth -= 1;
                    self.at += 1;
                }
                Some(b',' | b':') if depth > 0 => {
                    self.at += 1;
                    continue;
                }
                Some(_) => {
                    while matches!(self.peek(), Some(b) if !b",:]} \t\r\n".contains(&b)) {
                        self.at += 1;
                    }
                }
            }
            if depth == 0 {
                return true;
            }
        }
    }

    /// In an object starting here, moves to the value of `key`, leaving `at` on the key.
    fn enter_key(&mut self, key: &str) -> bool {
        if !self.eat(b'{') {
            return false;
        }
        loop {
            self.space();
            let key_at = self.at;
            let Some(found) = self.string() else {
                return false;
            };
            if !self.eat(b':') {
                return false;
            }
            if found == key {
                // The key's line is the one reported; the value follows the colon.
                self.mark = key_at;
                return true;
            }
            if !self.skip_value() || !self.eat(b',') {
                return false;
            }
        }
    }

    /// In a list starting here, moves to item `index`.
    fn enter_item(&mut self, index: usize) -> bool {
        if !self.eat(b'[') {
            return false;
        }
        for _ in 0..index {
            if !self.skip_value() || !self.eat(b',') {
                return false;
            }
        }
        self.space();
        self.mark = self.at;
        !matches!(self.peek(), None | Some(b']'))
    }
}
