//! Shared helpers of the fuzz targets: input cursors, chunking, a PRNG, and the fuzz side
//! of the core's checked client/server pair (`mcp_proto::testing`).

pub mod harness;

/// Reads bytes off the front of the fuzz input; zero once it is exhausted.
pub struct Cursor<'a> {
    data: &'a [u8],
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Cursor { data }
    }

    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    pub fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        for x in &mut b {
            *x = self.byte();
        }
        u64::from_le_bytes(b)
    }

    pub fn rest(self) -> &'a [u8] {
        self.data
    }
}

/// A cyclic list of chunk sizes taken from the input (0 is a valid, empty, chunk).
pub struct Chunker {
    sizes: Vec<usize>,
}

impl Chunker {
    /// Reads a count byte (0..=15 sizes) and then one byte per size: 0..=239 is a size in
    /// bytes, 240..=255 a multiple of 256 (up to 4 KiB). No sizes: the input is one chunk.
    pub fn new(cur: &mut Cursor<'_>) -> Self {
        let n = cur.byte() % 16;
        let sizes = (0..n)
            .map(|_| match cur.byte() {
                b @ 0..=239 => usize::from(b),
                b => usize::from(b - 239) * 256,
            })
            .collect();
        Chunker { sizes }
    }

    /// The input split into chunks. Empty chunks are produced as given (at most a bounded
    /// number in a row, so the split always terminates).
    pub fn split<'a>(&self, input: &'a [u8]) -> Vec<&'a [u8]> {
        if self.sizes.is_empty() || self.sizes.iter().all(|&s| s == 0) {
            let mut v = vec![input];
            if !self.sizes.is_empty() {
                v.push(&input[input.len()..]);
            }
            return v;
        }
        let mut out = Vec::new();
        let mut rest = input;
        let mut i = 0;
        while !rest.is_empty() {
            let n = self.sizes[i % self.sizes.len()].min(rest.len());
            let (a, b) = rest.split_at(n);
            out.push(a);
            rest = b;
            i += 1;
        }
        out
    }
}

/// The core's deterministic PRNG (xorshift64*).
pub use mcp_proto::testing::Rng;
