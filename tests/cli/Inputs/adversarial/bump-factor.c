// Case 4 of the adversarial candidates: bump, right, that also writes the
// global `factor`, which the recorded launch only read.
extern float factor;
extern int calls;

void bump(float *y, int n) {
  float f = factor;
  calls += 1;
  for (int i = 0; i < n; ++i)
    y[i] *= f;
  factor = 1.0f;
}
