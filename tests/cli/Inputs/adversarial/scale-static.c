// Case 3 of the adversarial candidates, the plain way: a static call
// counter. r3 refuses it before anything runs: the extracted kernel's
// statics are globals that must have recorded addresses.
static int calls;

void scale(int n, float a, float *x, float *out) {
  if (calls++ > 0)
    return;
  for (int i = 0; i < n; ++i)
    out[i] = a * x[i];
}
