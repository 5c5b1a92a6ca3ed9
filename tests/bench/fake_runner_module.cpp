// A runner module built for another zero_bench: it reports a foreign interface
// (or, with ZB_FAKE_WITHOUT_INTERFACE, none at all, as modules built before the
// check). zero_bench must refuse it before calling an entry point; if it did
// call one, the run would exit 42 and the test would see it.
struct Config;

#ifndef ZB_FAKE_WITHOUT_INTERFACE
extern "C" const char* zb_runner_interface() { return "zero-bench 0.0.9 interface 0123456789abcdef"; }
#endif
extern "C" int zb_runner_run_timed(const Config*) { return 42; }
extern "C" int zb_runner_run_calibration(const Config*) { return 42; }
