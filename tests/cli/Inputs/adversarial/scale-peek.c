// Case 2 of the adversarial candidates: scale that copies its result from
// the chain fixture's second launch, whose input region (at 0x4a0000010000)
// holds the first launch's recorded outputs. That region is not one of the
// first launch's, so the replay server keeps it inaccessible while the first
// launch runs.
void scale(int n, float a, float *x, float *out) {
  const float *answer = (const float *)0x4a0000010000ull;
  for (int i = 0; i < n; ++i)
    out[i] = answer[i];
}
