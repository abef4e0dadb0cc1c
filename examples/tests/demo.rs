//! The demo's output: no terminal escape codes in a pipe or with `NO_COLOR`; bold headings on
//! a terminal (a pseudo-terminal from `script`, where the system has it). And the `--help` of
//! `demo` and `everything`.

use std::process::{Command, Stdio};

use mcp_examples::walk::use_colour;

const DEMO: &str = env!("CARGO_BIN_EXE_demo");

fn demo(command: &mut Command) -> String {
    let out = command
        .stdin(Stdio::null())
        .output()
        .expect("the demo runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("done: every step succeeded"), "{text}");
    text
}

#[test]
fn piped_output_has_no_escape_codes() {
    let text = demo(Command::new(DEMO).env_remove("NO_COLOR"));
    assert!(text.contains("\n▶ close\n"), "{text}");
    assert!(
        !text.contains('\x1b'),
        "escape codes in piped output:\n{text}"
    );
}

/// `script -qec CMD /dev/null` runs CMD on a pseudo-terminal (util-linux).
fn on_a_terminal(no_color: Option<&str>) -> Option<String> {
    let found = Command::new("script").arg("--version").output();
    if !found.is_ok_and(|o| o.status.success()) {
        eprintln!("no util-linux `script`: the terminal case is not run");
        return None;
    }
    let mut cmd = Command::new("script");
    cmd.args(["-qec", DEMO, "/dev/null"]).env("TERM", "xterm");
    let text = match no_color {
        Some(v) => demo(cmd.env("NO_COLOR", v)),
        None => demo(cmd.env_remove("NO_COLOR")),
    };
    Some(text)
}

#[test]
fn a_terminal_gets_bold_headings_unless_no_color() {
    let Some(styled) = on_a_terminal(None) else {
        return;
    };
    assert!(styled.contains("\x1b[1m▶ close\x1b[0m"), "{styled}");
    let plain = on_a_terminal(Some("1")).expect("script ran before");
    assert!(
        !plain.contains('\x1b'),
        "escape codes with NO_COLOR:\n{plain}"
    );
    assert!(plain.contains("▶ close"), "{plain}");
}

#[test]
fn the_colour_rule() {
    assert!(use_colour(true, None, Some("xterm")));
    assert!(use_colour(true, Some(""), None));
    assert!(!use_colour(false, None, Some("xterm")));
    assert!(!use_colour(true, Some("1"), Some("xterm")));
    assert!(!use_colour(true, None, Some("dumb")));
}

#[test]
fn help_goes_to_stdout_and_exits_0() {
    for (exe, first) in [
        (DEMO, "demo: spawns the `everything` server"),
        (
            env!("CARGO_BIN_EXE_everything"),
            "everything: an MCP server",
        ),
    ] {
        for flag in ["--help", "-h"] {
            let out = Command::new(exe).arg(flag).output().expect("runs");
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{exe} {flag}: {:?}", out.status);
            assert!(text.starts_with(first), "{text}");
            assert!(text.contains("usage: "), "{text}");
            assert!(out.stderr.is_empty());
        }
    }
    let out = Command::new(env!("CARGO_BIN_EXE_everything"))
        .arg("--bogus")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("everything: unknown argument"));
}
