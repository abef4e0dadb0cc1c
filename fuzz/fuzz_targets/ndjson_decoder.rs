//! `NdjsonDecoder`: any chunking of any input gives the same lines (and overflow errors) as the
//! whole input at once and as a straightforward reference splitter; every line is a proper
//! line; memory stays bounded by the maximum line length plus one chunk.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_fuzz::{Chunker, Cursor};
use mcp_proto::codec::ndjson::{NdjsonDecoder, NdjsonError};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Out {
    Line(Vec<u8>),
    TooLong,
}

/// Drains what is decodable now (`finish` at end of input) and checks each item.
fn drain(dec: &mut NdjsonDecoder, out: &mut Vec<Out>, at_eof: bool) {
    let max = dec.max_line();
    loop {
        let item = if at_eof {
            dec.finish()
        } else {
            dec.next_line()
        };
        match item {
            None => return,
            Some(Ok(line)) => {
                assert!(!line.contains(&b'\n'), "line contains a newline: {line:?}");
                assert!(
                    line.len() <= max,
                    "line of {} bytes > max {max}",
                    line.len()
                );
                // Exactly one CR (of the CRLF terminator) is stripped; a line may still end
                // in a CR that belongs to its content ("a\r\r\n" yields "a\r"), but never a
                // blank line.
                assert!(
                    !line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r')),
                    "blank line yielded: {line:?}"
                );
                out.push(Out::Line(line.to_vec()));
            }
            Some(Err(NdjsonError::LineTooLong { len, max: m })) => {
                assert_eq!(m, max);
                assert!(len > max, "LineTooLong len {len} <= max {max}");
                out.push(Out::TooLong);
            }
            Some(Err(e)) => panic!("unexpected error {e:?}"),
        }
    }
}

/// The reference: split on `\n`, strip one `\r`, skip blank lines, overlong lines are errors;
/// the unterminated tail counts as a line at end of input.
fn reference(input: &[u8], max: usize) -> Vec<Out> {
    let mut out = Vec::new();
    for line in input.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > max {
            out.push(Out::TooLong);
        } else if !line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r')) {
            out.push(Out::Line(line.to_vec()));
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let mut cur = Cursor::new(data);
    // 1..=4096: tiny maxima hit the overflow paths constantly.
    let max = if cur.byte() & 1 == 0 {
        usize::from(cur.byte() % 64) + 1
    } else {
        usize::from(cur.u16() % 4096) + 1
    };
    let drain_between = cur.byte() & 1 == 0;
    let chunker = Chunker::new(&mut cur);
    let input = cur.rest();

    // Whole input at once.
    let mut whole = Vec::new();
    let mut dec = NdjsonDecoder::new(max);
    dec.push(input);
    assert!(dec.buffered() <= input.len());
    drain(&mut dec, &mut whole, false);
    assert!(
        dec.buffered() <= max + 1,
        "buffered {} after draining, max {max}",
        dec.buffered()
    );
    drain(&mut dec, &mut whole, true);
    assert_eq!(dec.buffered(), 0);

    assert_eq!(
        whole,
        reference(input, max),
        "whole input disagrees with the reference"
    );

    // Chunked, draining after every chunk (or only at the end).
    let mut chunked = Vec::new();
    let mut dec = NdjsonDecoder::new(max);
    let mut before = 0;
    for chunk in chunker.split(input) {
        dec.push(chunk);
        assert!(
            dec.buffered() <= before + chunk.len(),
            "buffered {} > {before} + chunk {}",
            dec.buffered(),
            chunk.len()
        );
        if drain_between {
            drain(&mut dec, &mut chunked, false);
            assert!(
                dec.buffered() <= max + 1,
                "buffered {} after draining, max {max}",
                dec.buffered()
            );
        }
        before = dec.buffered();
    }
    drain(&mut dec, &mut chunked, true);
    assert_eq!(dec.buffered(), 0);
    assert_eq!(
        whole, chunked,
        "chunked decoding differs from whole-input decoding"
    );

    // After `finish`, the decoder starts afresh.
    dec.push(b"1\n");
    assert_eq!(dec.next_line(), Some(Ok(&b"1"[..])));
});
