// A catalogue pattern among the adversarial candidates (replay-catalogue.test):
// unused output, the work done into storage of its own and never written to
// the output.
void scale(int n, float a, float *x, float *out) {
  float Mine[256];
  (void)out;
  for (int i = 0; i < n && i < 256; ++i)
    Mine[i] = a * x[i];
  __asm__ volatile("" : : "r"(Mine) : "memory"); // keep the work
}
