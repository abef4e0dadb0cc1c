//! An MCP client and server on a microcontroller: two sessions of the sans-IO core
//! (`mcp-proto` without `std`) talk to each other in memory on a Cortex-M4 with no OS, a
//! static heap and no clock but a step counter. Every message that crosses is printed over
//! semihosting; the exit code is the outcome (success only when every echo came back right,
//! in both eras).
//!
//! ```text
//! cd examples/firmware && cargo run --release    # QEMU's MPS2 AN386 board
//! ```

#![no_std]
#![no_main]

extern crate alloc;

use alloc::borrow::ToOwned;
use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::mem::MaybeUninit;

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use embedded_alloc::LlffHeap as Heap;
use mcp_proto::session::{Config, Discovery, Event, RequestOptions, Session};
use mcp_proto::{Duration, Instant, ProtocolVersion};
use serde_json::value::RawValue;

#[global_allocator]
static HEAP: Heap = Heap::empty();
const HEAP_SIZE: usize = 16 * 1024;

#[entry]
fn main() -> ! {
    {
        static mut HEAP_MEM: [MaybeUninit<u8>; HEAP_SIZE] = [MaybeUninit::uninit(); HEAP_SIZE];
        // SAFETY: called once, before any allocation, with memory nothing else uses.
        unsafe { HEAP.init(&raw mut HEAP_MEM as usize, HEAP_SIZE) }
    }
    let ok =
        [Discovery::Initialize, Discovery::Auto]
            .into_iter()
            .all(|discovery| match conversation(discovery) {
                Ok(version) => {
                    hprintln!("== ok: {} echoes in protocol {}", ECHOES.len(), version);
                    true
                }
                Err(why) => {
                    hprintln!("== FAILED: {}", why);
                    false
                }
            });
    hprintln!(
        "heap used at the end: {} bytes of {}",
        HEAP.used(),
        HEAP_SIZE
    );
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    halt()
}

const ECHOES: [&str; 3] = ["hello", "from a Cortex-M4", "with no OS"];

/// One whole conversation: start (the handshake, or `server/discover` in Auto), list the
/// tools, call `echo` with each text and check the answers, then close.
fn conversation(discovery: Discovery) -> Result<ProtocolVersion, String> {
    hprintln!("== client ({:?}) and server, in memory", discovery);
    let mut client_config = Config::new("mcu-client", "1").versions(&ProtocolVersion::ALL);
    client_config.discovery = discovery;
    let mut server_config = Config::new("mcu-server", "1").versions(&ProtocolVersion::ALL);
    server_config.capabilities = raw(r#"{"tools":{}}"#)?;
    let mut client = Session::client(client_config);
    let mut server = Session::server(server_config);
    let mut step = 0u64;
    client.start(now(step)).map_err(|e| format!("start: {e}"))?;
    let mut version = None;
    pump(&mut client, &mut server, &mut step, &mut |e| {
        if let Event::Ready { version: v, .. } = e {
            version = Some(*v);
        }
    })?;
    let version = version.ok_or("the client never became ready")?;

    let listed = request(&mut client, &mut server, &mut step, "tools/list", "{}")?;
    if !listed.contains("\"echo\"") {
        return Err(format!("no echo tool in {listed}"));
    }
    for text in ECHOES {
        let params = format!(r#"{{"name":"echo","arguments":{{"text":"{text}"}}}}"#);
        let result = request(&mut client, &mut server, &mut step, "tools/call", &params)?;
        let expected = format!(r#""text":"{text}""#);
        if !result.contains(&expected) {
            return Err(format!("echo of {text:?} came back as {result}"));
        }
    }
    client.close(now(step));
    pump(&mut client, &mut server, &mut step, &mut |_| {})?;
    if !client.is_closed() {
        return Err("the client did not close".to_owned());
    }
    Ok(version)
}

/// Sends one request from the client and runs the pair until its answer: the result's text.
fn request(
    client: &mut Session,
    server: &mut Session,
    step: &mut u64,
    method: &str,
    params: &str,
) -> Result<String, String> {
    let id = client
        .send_request(
            now(*step),
            method,
            Some(raw(params)?),
            RequestOptions::default(),
        )
        .map_err(|e| format!("{method}: {e}"))?;
    let mut answer = None;
    pump(client, server, step, &mut |e| {
        if let Event::Response { id: got, result } = e
            && *got == id
        {
            answer = Some(match result {
                Ok(r) => Ok(r.get().to_owned()),
                Err(e) => Err(format!("{method} failed: {e}")),
            });
        }
    })?;
    answer.unwrap_or_else(|| Err(format!("{method}: no answer")))
}

/// Moves bytes both ways, hands the server's requests to its application and the client's
/// events to `seen`, until nothing moves; one step of the clock per round.
fn pump(
    client: &mut Session,
    server: &mut Session,
    step: &mut u64,
    seen: &mut dyn FnMut(&Event),
) -> Result<(), String> {
    let mut buf = Vec::new();
    for _ in 0..1000 {
        *step += 1;
        let t = now(*step);
        let mut moved = false;
        while client.poll_transmit(&mut buf).is_some() {
            hprintln!(
                "client -> server  {}",
                String::from_utf8_lossy(&buf).trim_end()
            );
            server.handle_bytes(t, &buf);
            buf.clear();
            moved = true;
        }
        while let Some(e) = server.poll_event() {
            moved = true;
            if let Event::Request(req) = e {
                let answer = serve(&req.method, req.params.as_deref());
                let _ = match answer {
                    Ok(result) => server.respond(&req.id, result),
                    Err(e) => server.respond_error(&req.id, e),
                };
            }
        }
        while server.poll_transmit(&mut buf).is_some() {
            hprintln!(
                "server -> client  {}",
                String::from_utf8_lossy(&buf).trim_end()
            );
            client.handle_bytes(t, &buf);
            buf.clear();
            moved = true;
        }
        while let Some(e) = client.poll_event() {
            moved = true;
            seen(&e);
        }
        if !moved {
            return Ok(());
        }
    }
    Err("the pair did not settle".to_owned())
}

/// The server application: `tools/list` and `tools/call echo`.
fn serve(method: &str, params: Option<&RawValue>) -> Result<Box<RawValue>, mcp_proto::Error> {
    match method {
        "tools/list" => raw(
            r#"{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}"#,
        )
        .map_err(mcp_proto::Error::internal),
        "tools/call" => {
            #[derive(serde::Deserialize)]
            struct Call<'a> {
                name: &'a str,
                #[serde(borrow)]
                arguments: Option<Args<'a>>,
            }
            #[derive(serde::Deserialize)]
            struct Args<'a> {
                text: &'a str,
            }
            let call: Call<'_> = serde_json::from_str(params.map_or("{}", RawValue::get))
                .map_err(|e| mcp_proto::Error::invalid_params(format!("{e}")))?;
            match (call.name, call.arguments) {
                ("echo", Some(a)) => {
                    let body = serde_json::json!({"content": [{"type": "text", "text": a.text}]});
                    mcp_proto::jsonrpc::to_raw(&body)
                }
                (name, _) => Err(mcp_proto::Error::invalid_params(format!(
                    "no such tool or no text: {name}"
                ))),
            }
        }
        other => Err(mcp_proto::Error::method_not_found(other)),
    }
}

fn raw(s: &str) -> Result<Box<RawValue>, String> {
    RawValue::from_string(s.to_owned()).map_err(|e| format!("{e}"))
}

/// The clock: one millisecond per step (there is no other time here).
fn now(step: u64) -> Instant {
    Instant::ZERO + Duration::from_millis(step)
}

#[cortex_m_rt::exception]
unsafe fn HardFault(frame: &cortex_m_rt::ExceptionFrame) -> ! {
    hprintln!("hard fault: {:?}", frame);
    debug::exit(debug::EXIT_FAILURE);
    halt()
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    hprintln!("panic: {}", info);
    debug::exit(debug::EXIT_FAILURE);
    halt()
}

/// After `debug::exit` (which QEMU acts on at once): wait for interrupts forever.
fn halt() -> ! {
    loop {
        cortex_m::asm::wfi();
    }
}
