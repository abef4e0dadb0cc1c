//! Bad input over stdio against the `everything` server: a duplicate id while the first request
//! is still running, mixed with garbage, and EOF in the middle of a line.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[test]
fn duplicate_in_flight_id_and_garbage_over_stdio() {
    for runtime in ["tokio", "async-std", "smol"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_everything"))
            .args(["--runtime", runtime])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let lines = [
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}).to_string(),
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}).to_string(),
            json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"steps":3,"delay_ms":100}}}).to_string(),
            json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"dup"}}}).to_string(),
            "{{{ not json".to_owned(),
            json!({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"after"}}}).to_string(),
        ];
        for l in &lines {
            writeln!(stdin, "{l}").unwrap();
        }
        // EOF in the middle of a line: the fragment is answered with a parse error.
        write!(stdin, "{{\"jsonrpc\":\"2.0\",\"id\":9,\"meth").unwrap();
        drop(stdin);
        let out: Vec<Value> = BufReader::new(child.stdout.take().unwrap())
            .lines()
            .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
            .collect();
        assert!(child.wait().unwrap().success(), "{runtime}: clean exit");
        let by = |pred: &dyn Fn(&Value) -> bool| {
            out.iter().filter(|m| pred(m)).cloned().collect::<Vec<_>>()
        };
        // The duplicate is refused while the first id 7 runs; the first still completes.
        let sevens = by(&|m| m["id"] == 7);
        assert_eq!(sevens.len(), 2, "{runtime}: {out:?}");
        assert_eq!(
            sevens[0]["error"]["code"], -32600,
            "{runtime}: duplicate refused first"
        );
        assert!(
            sevens[1]["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("slow"),
            "{runtime}"
        );
        // Garbage and the truncated tail: parse errors with a null id.
        let parse_errors = by(&|m| m["id"].is_null() && m["error"]["code"] == -32700);
        assert_eq!(parse_errors.len(), 2, "{runtime}: {out:?}");
        // The valid request around them was served.
        let eights = by(&|m| m["id"] == 8);
        assert_eq!(
            eights[0]["result"]["content"][0]["text"], "after",
            "{runtime}"
        );
    }
}
