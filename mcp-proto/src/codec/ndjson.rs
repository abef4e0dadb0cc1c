//! Newline-delimited JSON framing: the MCP stdio transport.
//!
//! Owns the split of a byte stream into lines ([`NdjsonDecoder`]) and the framing of one
//! outgoing message ([`encode`]). A line ends at `\n`; a trailing `\r` is stripped (CRLF);
//! blank and whitespace-only lines are skipped. A line longer than the configured maximum
//! yields exactly one [`NdjsonError::LineTooLong`], its remaining bytes are discarded up to the
//! next `\n`, and decoding resynchronises on the following line, so memory stays bounded by
//! about the maximum line length plus one input chunk whatever the peer sends.
//!
//! It never parses JSON, never validates UTF-8, never performs IO and never allocates per
//! message in the steady state: one internal buffer is reused and compacted lazily, and every
//! byte is scanned for a newline a bounded number of times (no quadratic rescans).

use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::fmt;

/// A framing error of the newline-delimited JSON decoder.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NdjsonError {
    /// A line exceeded the maximum line length. Its bytes were discarded up to the next `\n`;
    /// the following line decodes normally.
    LineTooLong {
        /// Bytes of the line seen when the overflow was detected (at least `max + 1`; the
        /// exact value depends on how the input was chunked).
        len: usize,
        /// The configured maximum line length.
        max: usize,
    },
}

impl fmt::Display for NdjsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NdjsonError::LineTooLong { len, max } => write!(
                f,
                "line too long: at least {len} bytes, the maximum is {max}"
            ),
        }
    }
}

impl core::error::Error for NdjsonError {}

/// Incremental decoder of newline-delimited JSON: bytes of any chunking in, complete lines out.
///
/// ```
/// use mcp_proto::codec::ndjson::NdjsonDecoder;
///
/// let mut dec = NdjsonDecoder::new(1024);
/// dec.push(b"{\"a\":1}\r\n\n{\"b\"");
/// assert_eq!(dec.next_line(), Some(Ok(&b"{\"a\":1}"[..])));
/// assert_eq!(dec.next_line(), None);
/// dec.push(b":2}");
/// assert_eq!(dec.next_line(), None);
/// assert_eq!(dec.finish(), Some(Ok(&b"{\"b\":2}"[..])));
/// assert_eq!(dec.finish(), None);
/// ```
#[derive(Debug, Clone)]
pub struct NdjsonDecoder {
    /// Received bytes; `buf[..start]` is consumed and dropped at the next compaction.
    buf: Vec<u8>,
    /// Read offset: start of the first unconsumed line.
    start: usize,
    /// Start of the unterminated tail: no `\n` in `buf[tail_start..]`, and every byte of
    /// `buf[start..tail_start]` belongs to a terminated line (or precedes an overflow marker).
    tail_start: usize,
    /// Overflowed lines removed from `buf`, in order: (position in `buf`, bytes seen). Empty in
    /// the steady state; more than one entry only if the caller pushes without draining.
    overflows: VecDeque<(usize, usize)>,
    /// The last line overflowed: input is dropped up to and including the next `\n`.
    discarding: bool,
    max_line: usize,
}

impl NdjsonDecoder {
    /// A decoder accepting lines of at most `max_line` bytes (the terminator not counted).
    pub fn new(max_line: usize) -> Self {
        NdjsonDecoder {
            buf: Vec::new(),
            start: 0,
            tail_start: 0,
            overflows: VecDeque::new(),
            discarding: false,
            max_line,
        }
    }

    /// The maximum line length in bytes, excluding the `\n` or `\r\n` terminator.
    pub fn max_line(&self) -> usize {
        self.max_line
    }

    /// Bytes currently held (unconsumed input).
    pub fn buffered(&self) -> usize {
        self.buf.len().saturating_sub(self.start)
    }

    /// Append input, split anywhere. An unterminated line that grows beyond the maximum is
    /// cut off at once (not buffered); its error is reported in order by
    /// [`next_line`](Self::next_line).
    pub fn push(&mut self, data: &[u8]) {
        self.compact();
        let mut data = data;
        if self.discarding {
            match memchr::memchr(b'\n', data) {
                None => return,
                Some(i) => {
                    self.discarding = false;
                    data = data.get(i + 1..).unwrap_or_default();
                }
            }
        }
        let Some(&last) = data.last() else {
            return;
        };
        let base = self.buf.len();
        let newline = memchr::memrchr(b'\n', data);
        // Length of the unterminated tail once `data` is appended.
        let tail_len = match newline {
            Some(i) => data.len() - i - 1,
            None => base - self.tail_start + data.len(),
        };
        // A trailing `\r` may still turn out to be half of a CRLF terminator.
        let content = tail_len - usize::from(last == b'\r');
        if content > self.max_line {
            // Keep only the terminated lines; the overlong tail is never buffered.
            match newline {
                Some(i) => self
                    .buf
                    .extend_from_slice(data.get(..=i).unwrap_or_default()),
                None => self.buf.truncate(self.tail_start),
            }
            self.tail_start = self.buf.len();
            self.overflows.push_back((self.tail_start, tail_len));
            self.discarding = true;
        } else {
            self.buf.extend_from_slice(data);
            if let Some(i) = newline {
                self.tail_start = base + i + 1;
            }
        }
    }

    /// Appends `data` and hands every complete line (or overflow error) to `each`, in order —
    /// [`push`](Self::push) followed by draining [`next_line`](Self::next_line), without the
    /// copy: while nothing is buffered, lines that end within `data` are handed out in place,
    /// and only an unterminated tail is kept.
    ///
    /// ```
    /// use mcp_proto::codec::ndjson::NdjsonDecoder;
    ///
    /// let mut dec = NdjsonDecoder::new(1024);
    /// let mut lines = Vec::new();
    /// dec.feed(b"{\"a\":1}\n{\"b\"", |l| lines.push(l.map(<[u8]>::to_vec)));
    /// dec.feed(b":2}\n", |l| lines.push(l.map(<[u8]>::to_vec)));
    /// assert_eq!(lines, [Ok(b"{\"a\":1}".to_vec()), Ok(b"{\"b\":2}".to_vec())]);
    /// ```
    pub fn feed(&mut self, data: &[u8], mut each: impl FnMut(Result<&[u8], NdjsonError>)) {
        let mut data = data;
        if self.start >= self.buf.len() && !self.discarding && self.overflows.is_empty() {
            while let Some(i) = memchr::memchr(b'\n', data) {
                let line = strip_cr(data.get(..i).unwrap_or_default());
                data = data.get(i + 1..).unwrap_or_default();
                if line.len() > self.max_line {
                    each(Err(NdjsonError::LineTooLong {
                        len: line.len(),
                        max: self.max_line,
                    }));
                } else if !is_blank(line) {
                    each(Ok(line));
                }
            }
        }
        self.push(data);
        while let Some(item) = self.next_line() {
            each(item);
        }
    }

    /// The next complete line (without its terminator), or `None` until more input arrives.
    /// Blank lines are skipped. An overlong line yields one `Err`, after which decoding goes on.
    ///
    /// # Errors
    /// `Some(Err(`[`NdjsonError::LineTooLong`]`))` once for a line over the decoder's maximum
    /// (its bytes are discarded up to the next `\n`).
    pub fn next_line(&mut self) -> Option<Result<&[u8], NdjsonError>> {
        match self.next_range()? {
            Ok((a, b)) => self.buf.get(a..b).map(Ok),
            Err(e) => Some(Err(e)),
        }
    }

    /// At end of input: like [`next_line`](Self::next_line), then the final unterminated line
    /// if it is not blank (a peer that omits the last newline loses nothing). Call repeatedly
    /// until `None`. Input pushed afterwards starts a fresh line.
    ///
    /// # Errors
    /// As [`next_line`](Self::next_line): `Some(Err(`[`NdjsonError::LineTooLong`]`))` for an
    /// overlong line.
    pub fn finish(&mut self) -> Option<Result<&[u8], NdjsonError>> {
        match self.next_range() {
            Some(Ok((a, b))) => return self.buf.get(a..b).map(Ok),
            Some(Err(e)) => return Some(Err(e)),
            None => {}
        }
        // Any overlong line was reported by `next_range`; its rest ends with the input.
        self.discarding = false;
        let a = self.tail_start.max(self.start);
        let b = self.buf.len();
        self.start = b;
        self.tail_start = b;
        let line = strip_cr(self.buf.get(a..b)?);
        if is_blank(line) { None } else { Some(Ok(line)) }
    }

    /// The next line as a range of `buf`, consuming it.
    fn next_range(&mut self) -> Option<Result<(usize, usize), NdjsonError>> {
        loop {
            let end = self
                .overflows
                .front()
                .map_or(self.tail_start, |&(pos, _)| pos);
            if self.start < end {
                let region = self.buf.get(self.start..end).unwrap_or_default();
                let Some(i) = memchr::memchr(b'\n', region) else {
                    // Unreachable by construction: the region holds terminated lines only.
                    self.start = end;
                    continue;
                };
                let line = strip_cr(region.get(..i).unwrap_or_default());
                let a = self.start;
                let b = a + line.len();
                self.start = a + i + 1;
                if line.len() > self.max_line {
                    return Some(Err(NdjsonError::LineTooLong {
                        len: line.len(),
                        max: self.max_line,
                    }));
                }
                if is_blank(line) {
                    continue;
                }
                return Some(Ok((a, b)));
            }
            return match self.overflows.front() {
                Some(&(pos, len)) if pos <= self.start => {
                    self.overflows.pop_front();
                    Some(Err(NdjsonError::LineTooLong {
                        len,
                        max: self.max_line,
                    }))
                }
                _ => None,
            };
        }
    }

    /// Drop consumed bytes once they are at least as many as the live ones, so the memmove
    /// is amortised over consumed input.
    fn compact(&mut self) {
        let start = self.start;
        if start == 0 {
            return;
        }
        let len = self.buf.len();
        if start >= len {
            self.buf.clear();
        } else if start >= len - start {
            self.buf.copy_within(start.., 0);
            self.buf.truncate(len - start);
        } else {
            return;
        }
        self.start = 0;
        self.tail_start = self.tail_start.saturating_sub(start);
        for (pos, _) in &mut self.overflows {
            *pos = pos.saturating_sub(start);
        }
    }
}

/// Strip one trailing `\r` (the CR of a CRLF terminator).
fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Only spaces, tabs and carriage returns.
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// Frame one message: append `message` and a `\n` to `out`. `message` must be compact JSON
/// without a raw newline (checked in debug builds only).
pub fn encode(message: &[u8], out: &mut Vec<u8>) {
    debug_assert!(
        !message.contains(&b'\n'),
        "an NDJSON message must not contain a raw newline"
    );
    out.reserve(message.len() + 1);
    out.extend_from_slice(message);
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::vec;

    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Out {
        Line(Vec<u8>),
        TooLong,
    }

    /// Drain everything currently decodable; checks every error's fields.
    fn drain(dec: &mut NdjsonDecoder, out: &mut Vec<Out>, at_eof: bool) {
        let max_line = dec.max_line();
        loop {
            let item = if at_eof {
                dec.finish()
            } else {
                dec.next_line()
            };
            match item {
                None => return,
                Some(Ok(line)) => {
                    assert!(line.len() <= max_line);
                    out.push(Out::Line(line.to_vec()));
                }
                Some(Err(NdjsonError::LineTooLong { len, max })) => {
                    assert_eq!(max, max_line);
                    assert!(len > max, "len {len} max {max}");
                    out.push(Out::TooLong);
                }
            }
        }
    }

    fn run<'a>(max: usize, chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<Out> {
        let mut dec = NdjsonDecoder::new(max);
        let mut out = Vec::new();
        for chunk in chunks {
            dec.push(chunk);
            drain(&mut dec, &mut out, false);
        }
        drain(&mut dec, &mut out, true);
        assert_eq!(dec.buffered(), 0);
        out
    }

    const MAX: usize = 16;
    const INPUT: &[u8] = b"{\"a\":1}\n\
        \r\n  \t \n\n\
        {\"b\":2}\r\n\
        {\"too\":\"long, far too long\"}\r\n\
        0123456789abcdef\r\n\
        0123456789abcdefg\n\
        \t\r\r\n\
        {\"c\":3}\n\
        {\"d\":4}";

    fn line(s: &[u8]) -> Out {
        Out::Line(s.to_vec())
    }

    fn expected() -> Vec<Out> {
        vec![
            line(b"{\"a\":1}"),
            line(b"{\"b\":2}"),
            Out::TooLong,
            line(b"0123456789abcdef"),
            Out::TooLong,
            line(b"{\"c\":3}"),
            line(b"{\"d\":4}"),
        ]
    }

    #[test]
    fn whole_input() {
        assert_eq!(run(MAX, [INPUT]), expected());
    }

    #[test]
    fn every_split_point() {
        for i in 0..=INPUT.len() {
            let (a, b) = INPUT.split_at(i);
            assert_eq!(run(MAX, [a, b]), expected(), "split at {i}");
        }
    }

    #[test]
    fn byte_by_byte() {
        assert_eq!(run(MAX, INPUT.chunks(1)), expected());
    }

    #[test]
    fn every_split_point_without_draining_between() {
        for i in 0..=INPUT.len() {
            let (a, b) = INPUT.split_at(i);
            let mut dec = NdjsonDecoder::new(MAX);
            dec.push(a);
            dec.push(b);
            let mut out = Vec::new();
            drain(&mut dec, &mut out, true);
            assert_eq!(out, expected(), "split at {i}");
        }
    }

    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }
    }

    #[test]
    fn random_chunking() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let mut input = Vec::new();
        for _ in 0..20 {
            input.extend_from_slice(INPUT);
            input.push(b'\n');
        }
        let want: Vec<Out> = (0..20).flat_map(|_| expected()).collect();
        for _ in 0..500 {
            let mut chunks = Vec::new();
            let mut rest = &input[..];
            while !rest.is_empty() {
                let n = (rng.next() % 40 + 1) as usize;
                let (a, b) = rest.split_at(n.min(rest.len()));
                chunks.push(a);
                rest = b;
            }
            assert_eq!(run(MAX, chunks.iter().copied()), want);
        }
    }

    /// `feed` with the same chunks yields exactly what `push` + `next_line` yields.
    fn run_feed<'a>(max: usize, chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<Out> {
        let mut dec = NdjsonDecoder::new(max);
        let mut out = Vec::new();
        for chunk in chunks {
            dec.feed(chunk, |item| match item {
                Ok(line) => {
                    assert!(line.len() <= max);
                    out.push(Out::Line(line.to_vec()));
                }
                Err(NdjsonError::LineTooLong { len, max: m }) => {
                    assert_eq!(m, max);
                    assert!(len > max, "len {len} max {max}");
                    out.push(Out::TooLong);
                }
            });
        }
        drain(&mut dec, &mut out, true);
        assert_eq!(dec.buffered(), 0);
        out
    }

    #[test]
    fn feed_matches_push() {
        assert_eq!(run_feed(MAX, [INPUT]), expected());
        for i in 0..=INPUT.len() {
            let (a, b) = INPUT.split_at(i);
            assert_eq!(run_feed(MAX, [a, b]), expected(), "split at {i}");
        }
        assert_eq!(run_feed(MAX, INPUT.chunks(1)), expected());
        let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
        let mut input = Vec::new();
        for _ in 0..20 {
            input.extend_from_slice(INPUT);
            input.push(b'\n');
        }
        for _ in 0..500 {
            let mut chunks = Vec::new();
            let mut rest = &input[..];
            while !rest.is_empty() {
                let n = (rng.next() % 60 + 1) as usize;
                let (a, b) = rest.split_at(n.min(rest.len()));
                chunks.push(a);
                rest = b;
            }
            assert_eq!(
                run_feed(MAX, chunks.iter().copied()),
                run(MAX, chunks.iter().copied())
            );
        }
    }

    #[test]
    fn feed_lends_complete_lines_without_buffering() {
        let mut dec = NdjsonDecoder::new(64);
        let mut n = 0;
        dec.feed(b"{\"a\":1}\n{\"b\":2}\r\n{\"c\"", |l| {
            assert!(l.is_ok());
            n += 1;
        });
        assert_eq!(n, 2);
        // Only the unterminated tail was kept.
        assert_eq!(dec.buffered(), 4);
    }

    #[test]
    fn exact_boundary() {
        let mut dec = NdjsonDecoder::new(8);
        dec.push(b"12345678\n123456789\n12345678\r\n123456789\r\nok\n");
        assert_eq!(dec.next_line(), Some(Ok(&b"12345678"[..])));
        assert_eq!(
            dec.next_line(),
            Some(Err(NdjsonError::LineTooLong { len: 9, max: 8 }))
        );
        assert_eq!(dec.next_line(), Some(Ok(&b"12345678"[..])));
        assert_eq!(
            dec.next_line(),
            Some(Err(NdjsonError::LineTooLong { len: 9, max: 8 }))
        );
        assert_eq!(dec.next_line(), Some(Ok(&b"ok"[..])));
        assert_eq!(dec.next_line(), None);

        // Detected on the unterminated tail as soon as it holds max + 1 bytes.
        let mut dec = NdjsonDecoder::new(8);
        dec.push(b"12345678");
        assert_eq!(dec.next_line(), None);
        dec.push(b"\r");
        assert_eq!(dec.next_line(), None, "a CR may still be half of CRLF");
        dec.push(b"9");
        assert_eq!(
            dec.next_line(),
            Some(Err(NdjsonError::LineTooLong { len: 10, max: 8 }))
        );
        assert_eq!(dec.buffered(), 0);
        dec.push(b"rest\nnext\n");
        assert_eq!(dec.next_line(), Some(Ok(&b"next"[..])));
        assert_eq!(dec.next_line(), None);

        // An unterminated final line of exactly max bytes is accepted at EOF.
        let mut dec = NdjsonDecoder::new(8);
        dec.push(b"12345678\r");
        assert_eq!(dec.finish(), Some(Ok(&b"12345678"[..])));
        assert_eq!(dec.finish(), None);
    }

    #[test]
    fn zero_max_line_rejects_every_non_empty_line() {
        assert_eq!(
            run(0, [&b"\n\r\nx\n\n"[..]]),
            vec![Out::TooLong],
            "blank lines are fine, anything else overflows"
        );
    }

    #[test]
    fn memory_stays_bounded() {
        const MAX_LINE: usize = 1024;
        let chunk = [b'x'; 4096];
        for drain_each in [true, false] {
            let mut dec = NdjsonDecoder::new(MAX_LINE);
            dec.push(b"{\"first\":1}\n");
            let mut out = Vec::new();
            for _ in 0..(10 << 20) / chunk.len() {
                dec.push(&chunk);
                assert!(dec.buffered() <= MAX_LINE + chunk.len() + 16);
                if drain_each {
                    drain(&mut dec, &mut out, false);
                    assert!(dec.buffered() <= MAX_LINE + chunk.len());
                }
            }
            assert!(dec.buf.capacity() <= 2 * (MAX_LINE + chunk.len()));
            dec.push(b"\n{\"ok\":1}\n");
            drain(&mut dec, &mut out, true);
            assert_eq!(
                out,
                vec![line(b"{\"first\":1}"), Out::TooLong, line(b"{\"ok\":1}")]
            );
        }
    }

    #[test]
    fn several_overflows_without_draining() {
        let mut dec = NdjsonDecoder::new(4);
        for part in [&b"a\nbbbbbbb"[..], b"bb\nc\ndddddd", b"\ne", b"\n"] {
            dec.push(part);
        }
        let mut out = Vec::new();
        drain(&mut dec, &mut out, true);
        assert_eq!(
            out,
            vec![
                line(b"a"),
                Out::TooLong,
                line(b"c"),
                Out::TooLong,
                line(b"e")
            ]
        );
    }

    #[test]
    fn steady_state_reuses_the_buffer() {
        let mut dec = NdjsonDecoder::new(1 << 16);
        let mut msg = Vec::new();
        for i in 0..64 {
            encode(
                format!("{{\"jsonrpc\":\"2.0\",\"id\":{i}}}").as_bytes(),
                &mut msg,
            );
        }
        let mut count = 0;
        let mut cap = 0;
        for round in 0..200 {
            for chunk in msg.chunks(700) {
                dec.push(chunk);
                while let Some(Ok(_)) = dec.next_line() {
                    count += 1;
                }
            }
            if round == 0 {
                cap = dec.buf.capacity();
            }
            assert_eq!(dec.buf.capacity(), cap, "no growth after warm-up");
        }
        assert_eq!(count, 64 * 200);
    }

    #[test]
    fn finish_skips_blank_tail_and_reports_pending() {
        let mut dec = NdjsonDecoder::new(4);
        dec.push(b"ab\n \t\r");
        assert_eq!(dec.finish(), Some(Ok(&b"ab"[..])));
        assert_eq!(dec.finish(), None);
        assert_eq!(dec.buffered(), 0);

        let mut dec = NdjsonDecoder::new(4);
        dec.push(b"abcdefgh");
        assert!(matches!(
            dec.finish(),
            Some(Err(NdjsonError::LineTooLong { .. }))
        ));
        assert_eq!(dec.finish(), None);
        dec.push(b"new\n");
        assert_eq!(dec.next_line(), Some(Ok(&b"new"[..])));
    }

    #[test]
    fn encode_appends_line() {
        let mut out = b"{\"x\":0}\n".to_vec();
        encode(b"{\"jsonrpc\":\"2.0\"}", &mut out);
        assert_eq!(out, b"{\"x\":0}\n{\"jsonrpc\":\"2.0\"}\n");
        let mut dec = NdjsonDecoder::new(64);
        dec.push(&out);
        assert_eq!(dec.next_line(), Some(Ok(&b"{\"x\":0}"[..])));
        assert_eq!(dec.next_line(), Some(Ok(&b"{\"jsonrpc\":\"2.0\"}"[..])));
        assert_eq!(dec.next_line(), None);
    }

    #[test]
    fn error_display() {
        let e = NdjsonError::LineTooLong { len: 9, max: 8 };
        assert_eq!(
            alloc::string::ToString::to_string(&e),
            "line too long: at least 9 bytes, the maximum is 8"
        );
    }
}
