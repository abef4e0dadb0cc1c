//! The macros' compile-time behaviour: what compiles (`ui/pass`) and the errors of what does
//! not (`ui/fail`, each with the expected compiler output beside it, created with
//! `TRYBUILD=overwrite`; they are the output of the stable compiler).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
