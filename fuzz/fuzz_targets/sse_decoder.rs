//! `SseDecoder`: any chunking of any input gives the same events, last event ID and retry as
//! the whole input at once and as a plain reference reading of the WHATWG rules; `data` is
//! exactly the event's `data` lines joined with `\n` (no dispatch artefact); the memory the
//! decoder holds stays bounded by the maximum event size plus one chunk, whatever the input
//! length (measured with a counting allocator).
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

use libfuzzer_sys::fuzz_target;
use mcp_fuzz::{Chunker, Cursor};
use mcp_proto::codec::sse::{SseDecoder, SseError, SseEvent};

/// Counts the net bytes allocated while `TRACK` is set (the target is single-threaded).
struct Counting;
static TRACK: AtomicBool = AtomicBool::new(false);
static NET: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() && TRACK.load(Ordering::Relaxed) {
            NET.fetch_add(l.size() as isize, Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() && TRACK.load(Ordering::Relaxed) {
            NET.fetch_add(l.size() as isize, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if TRACK.load(Ordering::Relaxed) {
            NET.fetch_sub(l.size() as isize, Ordering::Relaxed);
        }
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() && TRACK.load(Ordering::Relaxed) {
            NET.fetch_add(new as isize - l.size() as isize, Ordering::Relaxed);
        }
        q
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Event(SseEvent),
    TooLarge,
    InvalidUtf8,
}

#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    items: Vec<Item>,
    last_id: String,
    retry: Option<u64>,
}

/// Takes the ready events out, checking each; returns the bytes the events own (allocated
/// inside the decoder, freed by us).
fn take(dec: &mut SseDecoder, max: usize, items: &mut Vec<Item>) -> isize {
    let mut handed_out = 0;
    while let Some(item) = dec.next_event() {
        items.push(match item {
            Ok(e) => {
                handed_out += (e.event.capacity() + e.data.capacity() + e.id.capacity()) as isize;
                assert!(!e.event.is_empty(), "empty event type dispatched");
                assert!(
                    e.data.len() <= max,
                    "data of {} bytes > max {max}",
                    e.data.len()
                );
                assert!(
                    e.event.len() <= max || e.event == "message",
                    "event type of {} bytes > max {max}",
                    e.event.len()
                );
                assert!(
                    !e.event.contains(['\r', '\n']),
                    "event type with a line break"
                );
                assert!(
                    !e.id.contains(['\r', '\n', '\0']),
                    "id with a line break or NUL"
                );
                assert!(!e.data.contains('\r'), "data with a CR");
                Item::Event(e)
            }
            Err(SseError::EventTooLarge { len, max: m }) => {
                assert_eq!(m, max);
                assert!(len > max, "EventTooLarge len {len} <= max {max}");
                Item::TooLarge
            }
            Err(SseError::InvalidUtf8) => Item::InvalidUtf8,
            Err(e) => panic!("unexpected error {e:?}"),
        });
    }
    handed_out
}

fn run(max: usize, chunks: &[&[u8]]) -> Outcome {
    let largest = chunks.iter().map(|c| c.len()).max().unwrap_or(0);
    let bound = 24 * (max as isize + 8) + 48 * largest as isize + 4096;
    let mut items = Vec::new();
    NET.store(0, Ordering::Relaxed);
    let mut dec = SseDecoder::new(max);
    for chunk in chunks {
        TRACK.store(true, Ordering::Relaxed);
        dec.push(chunk);
        TRACK.store(false, Ordering::Relaxed);
        // Taking events out allocates nothing in the decoder; the events' strings were
        // allocated (and counted) inside `push` and now belong to us.
        let handed_out = take(&mut dec, max, &mut items);
        let held = NET.fetch_sub(handed_out, Ordering::Relaxed) - handed_out;
        assert!(
            held <= bound,
            "decoder holds {held} bytes (max event {max}, largest chunk {largest}, bound {bound})"
        );
    }
    Outcome {
        items,
        last_id: dec.last_event_id().to_string(),
        retry: dec.retry(),
    }
}

/// A plain reading of the WHATWG event-stream rules on the whole input, with this crate's
/// size limit: the size of an event is the sum of its non-comment lines (terminators not
/// counted), checked line by line (the unterminated last line too); an overflow reports one
/// error and discards the event's remaining lines up to its blank line. Invalid UTF-8 in the
/// type or data fails the event; the id is decoded lossily.
fn reference(input: &[u8], max: usize) -> Outcome {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let mut out = Outcome {
        items: Vec::new(),
        last_id: String::new(),
        retry: None,
    };
    if input.len() < BOM.len() && BOM.starts_with(input) {
        return out; // a BOM still being matched
    }
    let input = input.strip_prefix(BOM).unwrap_or(input);
    // Split into lines.
    let mut lines: Vec<&[u8]> = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < input.len() {
        match input[i] {
            b'\r' => {
                lines.push(&input[start..i]);
                i += if input.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                start = i;
            }
            b'\n' => {
                lines.push(&input[start..i]);
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    let unterminated = &input[start..];

    let (mut size, mut discard) = (0usize, false);
    let (mut data, mut event_type, mut id_buf) = (Vec::new(), Vec::new(), String::new());
    let mut block_retry = None;
    for line in lines {
        if line.is_empty() {
            out.last_id = id_buf.clone();
            size = 0;
            let retry = block_retry.take();
            if std::mem::take(&mut discard) || data.is_empty() {
                data.clear();
                event_type.clear();
                continue;
            }
            data.pop(); // the LF after the last data line
            out.items.push(
                match (std::str::from_utf8(&event_type), std::str::from_utf8(&data)) {
                    (Ok(t), Ok(d)) => Item::Event(SseEvent {
                        event: if t.is_empty() {
                            "message".into()
                        } else {
                            t.into()
                        },
                        data: d.into(),
                        id: out.last_id.clone(),
                        retry,
                    }),
                    _ => Item::InvalidUtf8,
                },
            );
            data.clear();
            event_type.clear();
            continue;
        }
        if discard || line[0] == b':' {
            continue;
        }
        size += line.len();
        if size > max {
            out.items.push(Item::TooLarge);
            discard = true;
            data.clear();
            event_type.clear();
            continue;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(c) => (
                &line[..c],
                line[c + 1..].strip_prefix(b" ").unwrap_or(&line[c + 1..]),
            ),
            None => (line, &[][..]),
        };
        match field {
            b"event" => event_type = value.to_vec(),
            b"data" => {
                data.extend_from_slice(value);
                data.push(b'\n');
            }
            b"id" if !value.contains(&0) => id_buf = String::from_utf8_lossy(value).into_owned(),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Ok(n) = std::str::from_utf8(value).unwrap().parse::<u64>() {
                    out.retry = Some(n);
                    block_retry = Some(n);
                }
            }
            _ => {}
        }
    }
    if !unterminated.is_empty()
        && !discard
        && unterminated[0] != b':'
        && size + unterminated.len() > max
    {
        out.items.push(Item::TooLarge);
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let mut cur = Cursor::new(data);
    let max = if cur.byte() & 1 == 0 {
        usize::from(cur.byte() % 64) + 1
    } else {
        usize::from(cur.u16() % 8192) + 1
    };
    let chunker = Chunker::new(&mut cur);
    let input = cur.rest();

    let whole = run(max, &[input]);
    let chunked = run(max, &chunker.split(input));
    assert_eq!(
        whole, chunked,
        "chunked decoding differs from whole-input decoding"
    );
    let bytewise = run(max, &input.chunks(1).collect::<Vec<_>>());
    assert_eq!(
        whole, bytewise,
        "byte-by-byte decoding differs from whole-input decoding"
    );
    assert_eq!(
        whole,
        reference(input, max),
        "decoder disagrees with the reference reading"
    );
});
