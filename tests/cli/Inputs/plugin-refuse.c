// Kernels the plugin must refuse, each for its own reason; all are reported
// by one compile.
struct big {
  double v[8];
};

double by_value(struct big b) { return b.v[0]; } // byval on x86-64

struct big returns_big(double x) { // sret
  struct big b = {{x}};
  return b;
}

long double extended(long double x) { return x * 2; } // x86_fp80

int variadic(int n, ...) { return n; }

_Thread_local int per_thread;
static int bump(void) { return ++per_thread; }
int uses_tls(void) { return bump(); }

int fine(int x) { return x; }
