# A PyTorch application for the timing benchmark: softmax over the rows of a
# 4096 x 1024 float matrix, a few times (PyTorch's softmax_warp_forward).
import torch

x = torch.randn(4096, 1024, device="cuda")
for _ in range(5):
    y = torch.softmax(x, dim=-1)
torch.cuda.synchronize()
print("softmax", float(y.sum()))
