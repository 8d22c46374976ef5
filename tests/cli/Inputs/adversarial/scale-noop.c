// A catalogue pattern among the adversarial candidates (replay-catalogue.test):
// the no-op kernel, which returns at once and leaves its outputs as they were.
void scale(int n, float a, float *x, float *out) {
  (void)n, (void)a, (void)x, (void)out;
}
