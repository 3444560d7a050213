import torch, ember
from ember.runtime import cuda
SRC = "kernels_src/gemm_wgmma.ember"
for d in ({}, {"B_MN": True}, {"A_MN": True, "B_MN": True}, {"O": "bf16"}, {"CONSUMERS": 1, "BN": 32, "STAGES": 8},
          {"C_T": True, "CONSUMERS": 1, "BN": 16, "STAGES": 16}, {"SWAP": True, "CONSUMERS": 1, "BN": 16, "STAGES": 16},
          {"BULK_STORE": True},
          {"PINGPONG": True, "BN": 128, "STAGES": 6, "BULK_STORE": True},
          {"PINGPONG": True, "BN": 128, "STAGES": 6, "A_MN": True, "B_MN": True}):
    mod = cuda.load(ember.compile(SRC, arch="sm_90a", defines=d, cache=False))
    m, n, k = 296, 512, 200          # rows of 16-byte multiples: TMA strides
    a = torch.randn(m if not d.get("A_MN") else k, k if not d.get("A_MN") else m, device="cuda").to(torch.bfloat16)
    b = torch.randn(n if not d.get("B_MN") else k, k if not d.get("B_MN") else n, device="cuda").to(torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16 if d.get("O") else torch.float32)
    mod.gemm_wgmma(a, b, c, m, n, k, grid=(4,))
    torch.cuda.synchronize()
print("ok")
