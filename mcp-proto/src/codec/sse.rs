//! Server-Sent Events framing (the MCP Streamable HTTP transport).
//!
//! Owns the parse of an `text/event-stream` body into events ([`SseDecoder`]), exactly by the
//! WHATWG HTML "event stream" interpretation rules — a leading BOM skipped once, CRLF, LF and
//! CR line ends (a CRLF split across two chunks is one line end), comments, the `event`,
//! `data`, `id` and `retry` fields, dispatch on a blank line — and the encoding of events,
//! comments, `retry` blocks and MCP priming events ([`encode_event`], [`encode_comment`],
//! [`encode_retry`], [`encode_priming`]). Memory stays bounded by the configured maximum event
//! size plus one input chunk (plus the events not yet taken out).
//!
//! It never performs IO, never parses the JSON carried in `data`, never reconnects or waits
//! (`retry` is only reported), and never dispatches an event not terminated by a blank line.

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// The UTF-8 byte order mark, skipped once at the very start of a stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The event type: the last `event` field of the block, `"message"` when absent or empty.
    pub event: String,
    /// The `data` lines of the block joined with `\n`.
    pub data: String,
    /// The last event ID at dispatch time (it persists across events until an `id` changes it).
    pub id: String,
    /// The reconnection time in milliseconds set by a `retry` field of this event's block.
    pub retry: Option<u64>,
}

/// An error of one event; the stream goes on with the next event.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SseError {
    /// The event grew beyond the maximum size. Its remaining lines were discarded up to its
    /// terminating blank line; nothing of it is dispatched.
    EventTooLarge {
        /// The event's size when the overflow was detected (greater than `max`; the exact
        /// value depends on how the input was chunked).
        len: usize,
        /// The configured maximum event size.
        max: usize,
    },
    /// The event's type or data is not valid UTF-8.
    InvalidUtf8,
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SseError::EventTooLarge { len, max } => write!(
                f,
                "server-sent event too large: at least {len} bytes, the maximum is {max}"
            ),
            SseError::InvalidUtf8 => f.write_str("server-sent event is not valid UTF-8"),
        }
    }
}

impl core::error::Error for SseError {}

/// Incremental Server-Sent Events decoder: bytes of any chunking in, events out.
///
/// The size of an event is the sum of the lengths of its non-comment lines (line terminators
/// not counted); an event larger than `max_event_size` yields one
/// [`SseError::EventTooLarge`]. Comment lines are never buffered, whatever their length.
///
/// ```
/// use mcp_proto::codec::sse::SseDecoder;
///
/// let mut dec = SseDecoder::new(1 << 20);
/// dec.push(b"id: 7\r\ndata: {\"jsonrpc\":\"2.0\"}\r");
/// assert!(dec.next_event().is_none());
/// dec.push(b"\n\r\n");
/// let event = dec.next_event().unwrap().unwrap();
/// assert_eq!((event.event.as_str(), event.data.as_str()), ("message", "{\"jsonrpc\":\"2.0\"}"));
/// assert_eq!(dec.last_event_id(), "7");
/// ```
#[derive(Debug, Clone)]
pub struct SseDecoder {
    max: usize,
    /// BOM bytes matched so far at the start of the stream.
    bom_matched: usize,
    /// The start of the stream is behind us (BOM skipped or absent).
    bom_done: bool,
    /// The last line ended with a CR at the end of a chunk: a leading LF of the next chunk
    /// belongs to that line end.
    pending_cr: bool,
    /// The incomplete current line (only when it spans chunks).
    line: Vec<u8>,
    /// The rest of the current line is ignored (a comment, or a discarded event's line).
    skip_line: bool,
    /// Size of the current event so far.
    block_size: usize,
    /// The current event overflowed: its lines are ignored up to the blank line.
    discard_block: bool,
    data: Vec<u8>,
    event_type: Vec<u8>,
    /// The last event ID buffer.
    id_buf: String,
    /// The last event ID string: the buffer as of the last blank line.
    last_event_id: String,
    /// `retry` set within the current event.
    block_retry: Option<u64>,
    retry: Option<u64>,
    ready: VecDeque<Result<SseEvent, SseError>>,
}

impl SseDecoder {
    /// A decoder accepting events of at most `max_event_size` bytes.
    pub fn new(max_event_size: usize) -> Self {
        SseDecoder {
            max: max_event_size,
            bom_matched: 0,
            bom_done: false,
            pending_cr: false,
            line: Vec::new(),
            skip_line: false,
            block_size: 0,
            discard_block: false,
            data: Vec::new(),
            event_type: Vec::new(),
            id_buf: String::new(),
            last_event_id: String::new(),
            block_retry: None,
            retry: None,
            ready: VecDeque::new(),
        }
    }

    /// The maximum event size in bytes.
    pub fn max_event_size(&self) -> usize {
        self.max
    }

    /// Append input, split anywhere. Complete lines are interpreted at once; dispatched events
    /// wait for [`next_event`](Self::next_event).
    pub fn push(&mut self, data: &[u8]) {
        let mut data = data;
        if !self.bom_done {
            while let Some((&b, rest)) = data.split_first() {
                if BOM.get(self.bom_matched) == Some(&b) {
                    self.bom_matched += 1;
                    data = rest;
                    if self.bom_matched == BOM.len() {
                        self.bom_done = true;
                        break;
                    }
                } else {
                    // Not a BOM after all: the bytes matched so far are content.
                    self.bom_done = true;
                    self.feed(BOM.get(..self.bom_matched).unwrap_or_default());
                    break;
                }
            }
            if !self.bom_done {
                return;
            }
        }
        self.feed(data);
    }

    /// The next dispatched event (or the error of one), or `None` until more input arrives.
    /// An event not terminated by a blank line is never dispatched.
    ///
    /// # Errors
    /// `Some(Err(`[`SseError::EventTooLarge`]`))` for an event over the decoder's maximum
    /// (nothing of it is dispatched) and `Some(Err(`[`SseError::InvalidUtf8`]`))` for one whose
    /// type or data is not UTF-8; decoding goes on with the next event.
    pub fn next_event(&mut self) -> Option<Result<SseEvent, SseError>> {
        self.ready.pop_front()
    }

    /// The last event ID: the value of the last `id` field as of the latest blank line (the
    /// WHATWG "last event ID string"), to send as `Last-Event-ID` when reconnecting. It
    /// persists across events; an `id` in an event not yet terminated does not count yet.
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// The last valid reconnection time received, in milliseconds.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Split BOM-free input into lines.
    fn feed(&mut self, mut data: &[u8]) {
        if self.pending_cr
            && let Some((&first, rest)) = data.split_first()
        {
            self.pending_cr = false;
            if first == b'\n' {
                data = rest;
            }
        }
        while !data.is_empty() {
            let Some(i) = memchr::memchr2(b'\n', b'\r', data) else {
                self.partial(data);
                return;
            };
            let head = data.get(..i).unwrap_or_default();
            let mut rest = data.get(i + 1..).unwrap_or_default();
            if data.get(i) == Some(&b'\r') {
                match rest.split_first() {
                    Some((&b'\n', after)) => rest = after,
                    Some(_) => {}
                    None => self.pending_cr = true,
                }
            }
            self.end_line(head);
            data = rest;
        }
    }

    /// Bytes of a line whose end has not arrived yet.
    fn partial(&mut self, head: &[u8]) {
        if self.skip_line {
            return;
        }
        let first = self.line.first().or(head.first());
        if self.discard_block || first == Some(&b':') {
            self.skip_line = true;
            self.line.clear();
            return;
        }
        let size = self
            .block_size
            .saturating_add(self.line.len())
            .saturating_add(head.len());
        if size > self.max {
            self.too_large(size);
            self.skip_line = true;
            self.line.clear();
            return;
        }
        self.line.extend_from_slice(head);
    }

    /// The current line ends after `head`.
    fn end_line(&mut self, head: &[u8]) {
        if self.skip_line {
            self.skip_line = false;
        } else if self.line.is_empty() {
            self.process_line(head);
        } else {
            let mut line = core::mem::take(&mut self.line);
            line.extend_from_slice(head);
            self.process_line(&line);
            line.clear();
            self.line = line;
        }
    }

    /// Interpret one complete line.
    fn process_line(&mut self, line: &[u8]) {
        if line.is_empty() {
            self.dispatch();
            return;
        }
        if self.discard_block || line.first() == Some(&b':') {
            return;
        }
        let size = self.block_size.saturating_add(line.len());
        if size > self.max {
            self.too_large(size);
            return;
        }
        self.block_size = size;
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let value = line.get(i + 1..).unwrap_or_default();
                (
                    line.get(..i).unwrap_or_default(),
                    value.strip_prefix(b" ").unwrap_or(value),
                )
            }
            None => (line, &[][..]),
        };
        match field {
            b"event" => {
                self.event_type.clear();
                self.event_type.extend_from_slice(value);
            }
            b"data" => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            // An id containing U+0000 is ignored.
            b"id" if !value.contains(&0) => {
                self.id_buf.clear();
                // Lines split at ASCII bytes only, so decoding per line equals decoding
                // the stream with replacement characters, as the standard does.
                self.id_buf.push_str(&String::from_utf8_lossy(value));
            }
            b"retry" => {
                if let Some(millis) = parse_retry(value) {
                    self.retry = Some(millis);
                    self.block_retry = Some(millis);
                }
            }
            _ => {}
        }
    }

    /// The current event overflowed: report it once and discard it.
    fn too_large(&mut self, len: usize) {
        self.ready
            .push_back(Err(SseError::EventTooLarge { len, max: self.max }));
        self.discard_block = true;
        self.data.clear();
        self.event_type.clear();
    }

    /// A blank line: dispatch the event, if any.
    fn dispatch(&mut self) {
        self.last_event_id.clear();
        self.last_event_id.push_str(&self.id_buf);
        self.block_size = 0;
        let retry = self.block_retry.take();
        if core::mem::take(&mut self.discard_block) || self.data.is_empty() {
            self.data.clear();
            self.event_type.clear();
            return;
        }
        if self.data.last() == Some(&b'\n') {
            self.data.pop();
        }
        let event = match (
            core::str::from_utf8(&self.event_type),
            core::str::from_utf8(&self.data),
        ) {
            (Ok(event), Ok(data)) => Ok(SseEvent {
                event: String::from(if event.is_empty() { "message" } else { event }),
                data: String::from(data),
                id: self.last_event_id.clone(),
                retry,
            }),
            _ => Err(SseError::InvalidUtf8),
        };
        self.data.clear();
        self.event_type.clear();
        self.ready.push_back(event);
    }
}

/// A `retry` value: ASCII digits only, non-empty; a value that does not fit `u64` is ignored.
fn parse_retry(value: &[u8]) -> Option<u64> {
    if value.is_empty() {
        return None;
    }
    value.iter().try_fold(0u64, |acc, &b| {
        if b.is_ascii_digit() {
            acc.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

/// Append `name: value\n` (`name:\n` for an empty value). Line breaks in `value` would end
/// the field early, so each CR and LF is replaced by a space.
fn write_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.reserve(name.len() + value.len() + 3);
    out.extend_from_slice(name);
    out.push(b':');
    if !value.is_empty() {
        out.push(b' ');
        write_single_line(out, value);
    }
    out.push(b'\n');
}

/// Append `text` with every CR and LF replaced by a space.
fn write_single_line(out: &mut Vec<u8>, text: &[u8]) {
    let mut text = text;
    while let Some(i) = memchr::memchr2(b'\r', b'\n', text) {
        out.extend_from_slice(text.get(..i).unwrap_or_default());
        out.push(b' ');
        text = text.get(i + 1..).unwrap_or_default();
    }
    out.extend_from_slice(text);
}

/// Append a decimal number.
fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    let start = out.len();
    loop {
        // `n % 10 < 10`, so the cast is lossless.
        out.push(b'0' + (n % 10) as u8);
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if let Some(digits) = out.get_mut(start..) {
        digits.reverse();
    }
}

/// Append one event: `id` and `event` lines when given, then `data` split on CRLF, LF and CR
/// into one `data:` line each (so an empty `data` still dispatches, with empty data), then the
/// blank line. The decoder returns `data` with every line break normalised to `\n`. Line
/// breaks in `event` and `id` are replaced by spaces.
pub fn encode_event(out: &mut Vec<u8>, event: Option<&str>, id: Option<&str>, data: &str) {
    encode_event_bytes(out, event, id, data.as_bytes());
}

/// [`encode_event`] of `data` given as bytes (UTF-8, e.g. a serialised JSON message): no
/// text conversion, and one vectorised scan for its line breaks. Bytes that are not UTF-8 go
/// out as they are (a decoder replaces them).
pub fn encode_event_bytes(out: &mut Vec<u8>, event: Option<&str>, id: Option<&str>, data: &[u8]) {
    if let Some(id) = id {
        write_field(out, b"id", id.as_bytes());
    }
    if let Some(event) = event {
        write_field(out, b"event", event.as_bytes());
    }
    out.reserve(data.len() + 8);
    let mut data = data;
    loop {
        let Some(i) = memchr::memchr2(b'\r', b'\n', data) else {
            write_data_line(out, data);
            break;
        };
        write_data_line(out, data.get(..i).unwrap_or_default());
        let skip = if data.get(i..i + 2) == Some(b"\r\n") {
            2
        } else {
            1
        };
        data = data.get(i + skip..).unwrap_or_default();
    }
    out.push(b'\n');
}

/// One `data:` line of a value without line breaks.
fn write_data_line(out: &mut Vec<u8>, line: &[u8]) {
    if line.is_empty() {
        out.extend_from_slice(b"data:\n");
    } else {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line);
        out.push(b'\n');
    }
}

/// Append a comment block (`: text` and a blank line), e.g. as a keep-alive; decoders ignore
/// it. Line breaks in `text` are replaced by spaces.
pub fn encode_comment(out: &mut Vec<u8>, text: &str) {
    out.reserve(text.len() + 4);
    out.push(b':');
    if !text.is_empty() {
        out.push(b' ');
        write_single_line(out, text.as_bytes());
    }
    out.extend_from_slice(b"\n\n");
}

/// Append a block setting the client's reconnection time (`retry: millis` and a blank line).
pub fn encode_retry(out: &mut Vec<u8>, millis: u64) {
    out.extend_from_slice(b"retry: ");
    write_u64(out, millis);
    out.extend_from_slice(b"\n\n");
}

/// Append an MCP (2025-11-25) priming event: an event ID and an empty `data` field, with a
/// `retry` line when given: `id: X\n[retry: N\n]data:\n\n`. It dispatches an event with empty
/// data that only sets the last event ID (clients skip it as a message).
pub fn encode_priming(out: &mut Vec<u8>, id: &str, retry: Option<u64>) {
    write_field(out, b"id", id.as_bytes());
    priming_rest(out, retry);
}

/// [`encode_priming`] with the id `<a>-<b>` (see [`write_pair_id`]).
#[cfg(feature = "http")]
pub(crate) fn encode_priming_pair(out: &mut Vec<u8>, (a, b): (u64, u64), retry: Option<u64>) {
    write_pair_id(out, a, b);
    priming_rest(out, retry);
}

/// The `id` field `<a>-<b>` of two numbers (the Streamable HTTP endpoint's stream and sequence
/// number), written as [`write_field`] writes it, with no text formatted on the way.
#[cfg(feature = "http")]
pub(crate) fn write_pair_id(out: &mut Vec<u8>, a: u64, b: u64) {
    out.extend_from_slice(b"id: ");
    write_u64(out, a);
    out.push(b'-');
    write_u64(out, b);
    out.push(b'\n');
}

/// What follows a priming event's id: its `retry` line, when given, and its empty data.
fn priming_rest(out: &mut Vec<u8>, retry: Option<u64>) {
    if let Some(millis) = retry {
        out.extend_from_slice(b"retry: ");
        write_u64(out, millis);
        out.push(b'\n');
    }
    out.extend_from_slice(b"data:\n\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    type Item = Result<SseEvent, SseError>;

    fn ev(event: &str, data: &str, id: &str, retry: Option<u64>) -> Item {
        Ok(SseEvent {
            event: event.to_string(),
            data: data.to_string(),
            id: id.to_string(),
            retry,
        })
    }

    fn msg(data: &str) -> Item {
        ev("message", data, "", None)
    }

    const TOO_LARGE: Item = Err(SseError::EventTooLarge { len: 0, max: 0 });

    /// What a decoder produced: events (with `EventTooLarge` lengths zeroed, as they depend on
    /// chunking), the final last event ID and retry.
    #[derive(Debug, PartialEq, Eq)]
    struct Outcome {
        items: Vec<Item>,
        last_id: String,
        retry: Option<u64>,
    }

    fn run<'a>(max: usize, chunks: impl IntoIterator<Item = &'a [u8]>) -> Outcome {
        let mut dec = SseDecoder::new(max);
        let mut items = Vec::new();
        for chunk in chunks {
            dec.push(chunk);
            assert!(dec.line.len() <= max && dec.data.len() <= max);
            while let Some(item) = dec.next_event() {
                items.push(match item {
                    Err(SseError::EventTooLarge { len, max: m }) => {
                        assert_eq!(m, max);
                        assert!(len > max);
                        TOO_LARGE
                    }
                    other => other,
                });
            }
        }
        Outcome {
            items,
            last_id: dec.last_event_id().to_string(),
            retry: dec.retry(),
        }
    }

    /// Decode whole, at every split point and byte by byte; all must agree.
    fn decode(max: usize, input: &[u8]) -> Outcome {
        let whole = run(max, [input]);
        for i in 0..=input.len() {
            let (a, b) = input.split_at(i);
            assert_eq!(run(max, [a, b]), whole, "split at {i} of {input:?}");
        }
        assert_eq!(run(max, input.chunks(1)), whole, "byte by byte");
        whole
    }

    fn events(input: &str) -> Vec<Item> {
        decode(1 << 16, input.as_bytes()).items
    }

    #[test]
    fn whatwg_three_messages() {
        let input = "data: This is the first message.\n\n\
                     data: This is the second message, it\n\
                     data: has two lines.\n\n\
                     data: This is the third message.\n\n";
        assert_eq!(
            events(input),
            vec![
                msg("This is the first message."),
                msg("This is the second message, it\nhas two lines."),
                msg("This is the third message."),
            ]
        );
    }

    #[test]
    fn whatwg_event_types() {
        let input = "event: add\ndata: 73857293\n\n\
                     event: remove\ndata: 2153\n\n\
                     event: add\ndata: 113411\n\n";
        assert_eq!(
            events(input),
            vec![
                ev("add", "73857293", "", None),
                ev("remove", "2153", "", None),
                ev("add", "113411", "", None),
            ]
        );
    }

    #[test]
    fn whatwg_multi_line_data() {
        assert_eq!(
            events("data: YHOO\ndata: +2\ndata: 10\n\n"),
            vec![msg("YHOO\n+2\n10")]
        );
    }

    #[test]
    fn whatwg_test_stream_with_comment() {
        let input = ": test stream\n\n\
                     data: first event\nid: 1\n\n\
                     data:second event\nid\n\n\
                     data:  third event\n";
        let out = decode(1 << 16, input.as_bytes());
        assert_eq!(
            out.items,
            vec![
                ev("message", "first event", "1", None),
                ev("message", "second event", "", None),
            ],
            "the third event has no terminating blank line"
        );
        let out = decode(1 << 16, alloc::format!("{input}\n").as_bytes());
        assert_eq!(out.items.get(2), Some(&msg(" third event")));
    }

    #[test]
    fn whatwg_data_with_and_without_colon() {
        assert_eq!(
            events("data\n\ndata\ndata\n\ndata:"),
            vec![msg(""), msg("\n")]
        );
        assert_eq!(
            events("data:test\n\ndata: test\n\n"),
            vec![msg("test"), msg("test")]
        );
    }

    #[test]
    fn line_endings_are_equivalent() {
        let lf = "event: a\ndata: 1\ndata: 2\n\n: note\ndata:3\n\n\n\nid: x\ndata\n\n";
        let want = events(lf);
        assert_eq!(want.len(), 3);
        assert_eq!(events(&lf.replace('\n', "\r\n")), want);
        assert_eq!(events(&lf.replace('\n', "\r")), want);
        // Mixed, including CR LF CR sequences.
        assert_eq!(
            events("data: a\r\r\ndata: b\n\rdata: c\r\n\n"),
            vec![msg("a"), msg("b"), msg("c")]
        );
    }

    #[test]
    fn cr_at_chunk_end_then_lf_is_one_line_end() {
        let mut dec = SseDecoder::new(64);
        dec.push(b"data: a\r");
        dec.push(b"\n");
        assert!(dec.next_event().is_none(), "CR LF is one line end");
        dec.push(b"\r");
        assert_eq!(dec.next_event(), Some(msg("a")));
        dec.push(b"");
        dec.push(b"\ndata: b\n\n");
        assert_eq!(
            dec.next_event(),
            Some(msg("b")),
            "empty push keeps CR state"
        );
    }

    #[test]
    fn bom_is_skipped_once() {
        assert_eq!(events("\u{feff}data: x\n\n"), vec![msg("x")]);
        // A second BOM is content: the field name becomes "\u{feff}data", unknown.
        assert_eq!(
            events("\u{feff}\u{feff}data: x\n\ndata: y\n\n"),
            vec![msg("y")]
        );
        // A BOM later in the stream is content too.
        assert_eq!(events("data: \u{feff}x\n\n"), vec![msg("\u{feff}x")]);
        // A partial BOM is content, not dropped.
        assert_eq!(
            decode(64, b"\xEF\xBBdata: z\n\ndata: w\n\n").items,
            vec![msg("w")]
        );
        assert_eq!(decode(64, b"\xEF\xBB").items, vec![]);
    }

    #[test]
    fn id_persists_and_nul_is_ignored() {
        let input = "id: 1\ndata: a\n\ndata: b\n\nid: 2\0x\ndata: c\n\nid\ndata: d\n\nid: 3\n\n";
        let out = decode(1 << 10, input.as_bytes());
        assert_eq!(
            out.items,
            vec![
                ev("message", "a", "1", None),
                ev("message", "b", "1", None),
                ev("message", "c", "1", None),
                ev("message", "d", "", None),
            ]
        );
        assert_eq!(out.last_id, "3", "set by a blank line even without data");

        let mut dec = SseDecoder::new(64);
        dec.push(b"id: 5\ndata: a\n\nid: 6\ndata: partial\n");
        assert_eq!(dec.next_event(), Some(ev("message", "a", "5", None)));
        assert_eq!(dec.last_event_id(), "5", "event 6 is not complete");
        dec.push(b"\n");
        assert_eq!(dec.last_event_id(), "6");
    }

    #[test]
    fn retry_parsing() {
        let input = "retry: 1000\n\n\
                     retry: 10x\ndata: a\n\n\
                     retry: 2000\ndata: b\n\n\
                     retry\nretry:\nretry:  5\nretry: -1\nretry: 99999999999999999999999\n\
                     data: c\n\n";
        let out = decode(1 << 10, input.as_bytes());
        assert_eq!(
            out.items,
            vec![
                ev("message", "a", "", None),
                ev("message", "b", "", Some(2000)),
                ev("message", "c", "", None),
            ]
        );
        assert_eq!(out.retry, Some(2000));
        assert_eq!(decode(64, b"retry: 0\n").retry, Some(0), "applies at once");
    }

    #[test]
    fn unknown_fields_and_comments_are_ignored() {
        assert_eq!(
            events(":c\nfoo: bar\nDATA: x\nevent : y\n data: z\ndata: ok\n\n"),
            vec![msg("ok")]
        );
        assert_eq!(events("event: only\n\n: c\n\ndata: m\n\n"), vec![msg("m")]);
        assert_eq!(events("event:\ndata: e\n\n"), vec![msg("e")]);
        assert_eq!(events("data:a:b\n\n"), vec![msg("a:b")]);
    }

    #[test]
    fn event_at_eof_is_not_dispatched() {
        assert_eq!(events("data: a\n\ndata: b\n"), vec![msg("a")]);
        assert_eq!(events("data: a\n\ndata: b"), vec![msg("a")]);
        assert_eq!(events("data: a\r\n\r\ndata: b\r\n"), vec![msg("a")]);
    }

    #[test]
    fn invalid_utf8_fails_one_event() {
        assert_eq!(
            decode(64, b"data: \xff\n\nevent: \xc3\ndata: x\n\ndata: ok\n\n").items,
            vec![
                Err(SseError::InvalidUtf8),
                Err(SseError::InvalidUtf8),
                msg("ok")
            ]
        );
        // An invalid id is decoded with replacement characters, as the standard does.
        assert_eq!(
            decode(64, b"id: a\xffb\ndata: x\n\n").items,
            vec![ev("message", "x", "a\u{fffd}b", None)]
        );
    }

    #[test]
    fn too_large_recovers() {
        let mut input = b"data: small\n\nid: 1\ndata: ".to_vec();
        input.extend_from_slice(&[b'x'; 100]);
        input.extend_from_slice(b"\ndata: more\nid: 7\nretry: 9\n\ndata: after\n\n");
        let out = decode(32, &input);
        assert_eq!(
            out.items,
            vec![msg("small"), TOO_LARGE, ev("message", "after", "1", None)]
        );
        assert_eq!((out.last_id.as_str(), out.retry), ("1", None));

        // Many small lines add up; exactly max is accepted.
        assert_eq!(
            decode(20, b"data: 12345\ndata: 12345\ndata: 1\n\ndata: ok\n\n").items,
            vec![TOO_LARGE, msg("ok")]
        );
        assert_eq!(
            decode(20, b"data: 12345\ndata: 123\n\n").items,
            vec![msg("12345\n123")]
        );
        // Comments do not count and are never buffered.
        let mut input = b":".to_vec();
        input.extend_from_slice(&[b'c'; 100]);
        input.extend_from_slice(b"\ndata: ok\n\n");
        assert_eq!(decode(16, &input).items, vec![msg("ok")]);
    }

    #[test]
    fn memory_stays_bounded() {
        const MAX: usize = 1024;
        let chunk = [b'x'; 4096];
        for prefix in [&b"data: "[..], b":", b"id: 1\ndata: a\nfoo"] {
            let mut dec = SseDecoder::new(MAX);
            dec.push(prefix);
            for _ in 0..(10 << 20) / chunk.len() {
                dec.push(&chunk);
                assert!(dec.line.len() <= MAX && dec.data.len() <= MAX);
                assert!(dec.line.capacity() <= MAX + chunk.len());
            }
            dec.push(b"\n\ndata: ok\n\n");
            let mut items = Vec::new();
            while let Some(item) = dec.next_event() {
                items.push(item);
            }
            let last = items.last().and_then(|item| item.as_ref().ok());
            assert_eq!(last.map(|e| e.data.as_str()), Some("ok"));
            assert!(items.len() <= 2);
        }
    }

    fn normalise(data: &str) -> String {
        data.replace("\r\n", "\n").replace('\r', "\n")
    }

    #[test]
    fn byte_encoder_matches_the_text_encoder() {
        for data in [
            "",
            "x",
            "a\nb",
            "a\r\nb\rc\n",
            "\r\n\r\n",
            "{\"k\":\"\u{e9}\"}",
        ] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            encode_event(&mut a, Some("message"), Some("1-2"), data);
            encode_event_bytes(&mut b, Some("message"), Some("1-2"), data.as_bytes());
            assert_eq!(a, b, "{data:?}");
        }
        let mut out = Vec::new();
        encode_event_bytes(&mut out, None, None, b"a\r\nb");
        assert_eq!(out, b"data: a\ndata: b\n\n");
    }

    #[test]
    fn encoder_round_trip() {
        let cases = [
            "",
            "x",
            "\n",
            "a\nb",
            "a\r\nb",
            "a\rb",
            "a\r\n\r\nb\r",
            "\r\n",
            "\n\r",
            " leading space",
            "  two spaces",
            ": colon first",
            "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
            "trailing\n",
            "tab\tand unicode \u{e9}\u{1f600}",
        ];
        let mut stream = Vec::new();
        let mut want = Vec::new();
        for (n, data) in cases.iter().enumerate() {
            let id = n.to_string();
            encode_comment(&mut stream, "keep\nalive");
            encode_event(&mut stream, Some("custom type"), Some(&id), data);
            want.push(ev("custom type", &normalise(data), &id, None));
            encode_event(&mut stream, None, None, data);
            want.push(ev("message", &normalise(data), &id, None));
        }
        encode_retry(&mut stream, 3000);
        encode_priming(&mut stream, "p-1", Some(500));
        want.push(ev("message", "", "p-1", Some(500)));
        let out = decode(1 << 10, &stream);
        assert_eq!(out.items, want);
        assert_eq!(out.last_id, "p-1");
        assert_eq!(out.retry, Some(500));
    }

    #[test]
    fn encoder_output() {
        let mut out = Vec::new();
        encode_event(&mut out, None, None, "x");
        assert_eq!(out, b"data: x\n\n");
        out.clear();
        encode_event(&mut out, Some("e"), Some("1"), "a\r\nb\rc\n");
        assert_eq!(
            out,
            b"id: 1\nevent: e\ndata: a\ndata: b\ndata: c\ndata:\n\n"
        );
        out.clear();
        encode_event(&mut out, None, Some("a\nb"), "");
        assert_eq!(out, b"id: a b\ndata:\n\n");
        out.clear();
        encode_comment(&mut out, "ping\r\nnow");
        assert_eq!(out, b": ping  now\n\n");
        out.clear();
        encode_comment(&mut out, "");
        assert_eq!(out, b":\n\n");
        out.clear();
        encode_retry(&mut out, 0);
        encode_retry(&mut out, u64::MAX);
        assert_eq!(out, b"retry: 0\n\nretry: 18446744073709551615\n\n");
        out.clear();
        encode_priming(&mut out, "abc", None);
        assert_eq!(out, b"id: abc\ndata:\n\n");
        out.clear();
        encode_priming(&mut out, "abc", Some(1500));
        assert_eq!(out, b"id: abc\nretry: 1500\ndata:\n\n");
    }

    #[test]
    fn error_display() {
        assert_eq!(
            SseError::EventTooLarge { len: 9, max: 8 }.to_string(),
            "server-sent event too large: at least 9 bytes, the maximum is 8"
        );
        assert_eq!(
            SseError::InvalidUtf8.to_string(),
            "server-sent event is not valid UTF-8"
        );
    }
}
