#!/usr/bin/python3
"""PyTorch reference for the C engine: the pinned Pre-LN GPT of shared DESIGN.md.

One nn.Module (GPT) serves three modes:

  gpt_ref.py parity IN.rptf OUT.rptf
      Exact float64 forward, backward and one AdamW step on the config, batch and
      parameters in IN (written by build/tests/test_parity --export); writes logits,
      loss, losses (per position, B x T), grad_norm, grad.<name> and step.<name> to OUT
      (all f64).
  gpt_ref.py train [key=value ...]
      Trains from scratch in float32 on the corpus and evaluates the whole validation
      split; progress on stderr, one JSON line on stdout.
  gpt_ref.py torchinit OUT.json [V T L C H]
      PyTorch's default initialization of the model written from default modules
      (ModGPT), as per-tensor moments and bounds (the engine's init = torch test).
  gpt_ref.py bench [steps=N] [threads=K]
      Times N training steps of the default config (after 3 warm-up steps); one JSON
      line on stdout.

Model (DESIGN.md "The model"), with V vocab, T positions, C = d_model, L = n_layer,
H = n_head, hs = C / H:

  x = wte[tokens] + wpe[0..T-1]
  x = embnorm(x)      none: identity
                      layernorm: (x - mean) / sqrt(var + 1e-5) * en_w + en_b   (biased var)
                      rmsnorm:   x / sqrt(mean(x^2) + 1e-6) * en_w
                      scale:     x / rho   (a constant: no parameters)
                      layernorm_matched: layernorm, en_w initialized to rho
  rho = sqrt(mean over all (v, p, c) of (wte[v, c] + wpe[p, c])^2) of the initial weights
        (the RMS of the embedding sum over every vocabulary entry and position; here by
        brute force over the V x T x C sums, the engine uses a closed form)
  for each block l:
      h = LayerNorm(x; ln1_w, ln1_b, eps 1e-5)
      [q | k | v] = h @ qkv_w^T + qkv_b          (each of width C, in that order)
      head j uses columns j*hs:(j+1)*hs of q, k and v
      a_j = softmax(q_j k_j^T / sqrt(hs) + causal mask) v_j
      x = x + concat_j(a_j) @ proj_w^T + proj_b
      h = LayerNorm(x; ln2_w, ln2_b, eps 1e-5)
      x = x + gelu_tanh(h @ fc_w^T + fc_b) @ fc2_w^T + fc2_b
  x = LayerNorm(x; lnf_w, lnf_b, eps 1e-5)
  logits = x @ wte^T                             (tied, no bias; untied: x @ lm_head^T)
  loss = mean over all B*T positions of cross-entropy(logits, targets)

  gelu_tanh(u) = 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3)))

Parameter names and shapes (Linear weights are (out, in), y = x W^T + b), in this order:
  wte (V,C), wpe (T,C),
  h{l}.ln1_w (C), h{l}.ln1_b (C), h{l}.qkv_w (3C,C), h{l}.qkv_b (3C), h{l}.proj_w (C,C),
  h{l}.proj_b (C), h{l}.ln2_w (C), h{l}.ln2_b (C), h{l}.fc_w (4C,C), h{l}.fc_b (4C),
  h{l}.fc2_w (C,4C), h{l}.fc2_b (C)  for l = 0..L-1,
  lnf_w (C), lnf_b (C),
  en_w (C) [layernorm, layernorm_matched, rmsnorm], en_b (C) [layernorm, layernorm_matched],
  lm_head (V,C) [untied only].

Gradient clipping (parity, train and bench alike; deliberately NOT
torch.nn.utils.clip_grad_norm_, which divides by norm + 1e-6):
  norm = sqrt(sum over all parameters of sum(g^2))        (the logged, pre-clip norm)
  if grad_clip > 0 and norm > grad_clip:  g <- g * (grad_clip / norm)   for every g

AdamW (torch.optim.AdamW, two parameter groups: weight decay wd on the 2-D parameters
wte, wpe, *.qkv_w, *.proj_w, *.fc_w, *.fc2_w, lm_head; decay 0 on every norm weight and bias).
At step t (t = 1 for parity), for each parameter p with clipped gradient g:
  p <- p * (1 - lr * wd_group)                              (decoupled decay)
  m <- beta1 m + (1 - beta1) g;   v <- beta2 v + (1 - beta2) g^2      (m = v = 0 at t = 0)
  p <- p - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
"""
import collections
import json
import math
import os
import sys
import time

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:  # pragma: no cover - depends on the machine
    sys.stderr.write("gpt_ref: %s\ngpt_ref: PyTorch is needed: run scripts/deps.sh --torch "
                     "and use /usr/bin/python3\n" % e)
    sys.exit(1)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tensorfile  # noqa: E402

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Indexed by the engine's code (engine/config.h enum embed_norm).
EMBED_NORMS = ("none", "layernorm", "rmsnorm", "scale", "layernorm_matched")
LAYERNORMS = ("layernorm", "layernorm_matched")
LN_EPS = 1e-5    # every LayerNorm: blocks, final, and the layernorm embedding norm
RMS_EPS = 1e-6   # the rmsnorm embedding norm


# --------------------------------------------------------------------------- model

def layer_norm(x, w, b):
    """(x - mean) / sqrt(var + 1e-5) * w + b over the last dim, biased variance."""
    return F.layer_norm(x, (x.shape[-1],), w, b, LN_EPS)


def rms_norm(x, w):
    """x / sqrt(mean(x^2) + 1e-6) * w over the last dim."""
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + RMS_EPS) * w


def embed_rms(wte, wpe):
    """rho: the RMS of wte[v] + wpe[p] over every (v, p) pair, by brute force in float64."""
    with torch.no_grad():
        s = wte.detach().double()[:, None, :] + wpe.detach().double()[None, :, :]
        return float(s.pow(2).mean().sqrt())


def gelu_tanh(u):
    """0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3))), PyTorch's fused kernel."""
    return F.gelu(u, approximate="tanh")


class Block(nn.Module):
    """Pre-LN block: x += proj(attn(ln1(x))); x += fc2(gelu(fc(ln2(x))))."""

    def __init__(self, d_model, n_head):
        super().__init__()
        C = d_model
        self.n_head = n_head
        P = lambda *shape: nn.Parameter(torch.zeros(*shape))  # noqa: E731
        # Registration order = the documented file order.
        self.ln1_w = nn.Parameter(torch.ones(C))
        self.ln1_b = P(C)
        self.qkv_w = P(3 * C, C)
        self.qkv_b = P(3 * C)
        self.proj_w = P(C, C)
        self.proj_b = P(C)
        self.ln2_w = nn.Parameter(torch.ones(C))
        self.ln2_b = P(C)
        self.fc_w = P(4 * C, C)
        self.fc_b = P(4 * C)
        self.fc2_w = P(C, 4 * C)
        self.fc2_b = P(C)

    def attention(self, h, causal):
        B, T, C = h.shape
        H = self.n_head
        hs = C // H
        qkv = F.linear(h, self.qkv_w, self.qkv_b)          # (B, T, 3C) = [q | k | v]
        q, k, v = qkv.split(C, dim=2)                      # each (B, T, C)
        # (B, T, C) -> (B, H, T, hs): head j takes columns j*hs:(j+1)*hs.
        q = q.view(B, T, H, hs).transpose(1, 2)
        k = k.view(B, T, H, hs).transpose(1, 2)
        v = v.view(B, T, H, hs).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))   # (B, H, T, T)
        scores = scores.masked_fill(~causal[:T, :T], float("-inf"))  # key s > query t
        probs = torch.softmax(scores, dim=-1)
        a = probs @ v                                      # (B, H, T, hs)
        a = a.transpose(1, 2).reshape(B, T, C)             # heads back in column order
        return F.linear(a, self.proj_w, self.proj_b)

    def forward(self, x, causal):
        x = x + self.attention(layer_norm(x, self.ln1_w, self.ln1_b), causal)
        h = layer_norm(x, self.ln2_w, self.ln2_b)
        x = x + F.linear(gelu_tanh(F.linear(h, self.fc_w, self.fc_b)), self.fc2_w, self.fc2_b)
        return x


class GPT(nn.Module):
    def __init__(self, vocab, context, n_layer, d_model, n_head, embed_norm="none",
                 tie_embeddings=True):
        super().__init__()
        if embed_norm not in EMBED_NORMS:
            raise ValueError("embed_norm must be one of %s, not %r" % (EMBED_NORMS, embed_norm))
        if d_model % n_head:
            raise ValueError("d_model %d is not divisible by n_head %d" % (d_model, n_head))
        self.vocab, self.context, self.n_layer = vocab, context, n_layer
        self.d_model, self.n_head, self.embed_norm = d_model, n_head, embed_norm
        self.tie_embeddings = tie_embeddings
        self.embed_scale = 1.0  # scale: 1/rho, set from the initial weights (set_rho)
        C = d_model
        self.wte = nn.Parameter(torch.zeros(vocab, C))
        self.wpe = nn.Parameter(torch.zeros(context, C))
        for l in range(n_layer):
            self.add_module("h%d" % l, Block(C, n_head))
        self.lnf_w = nn.Parameter(torch.ones(C))
        self.lnf_b = nn.Parameter(torch.zeros(C))
        if embed_norm in LAYERNORMS + ("rmsnorm",):
            self.en_w = nn.Parameter(torch.ones(C))
        if embed_norm in LAYERNORMS:
            self.en_b = nn.Parameter(torch.zeros(C))
        if not tie_embeddings:
            self.lm_head = nn.Parameter(torch.zeros(vocab, C))
        # causal[t, s] is True where query t may attend to key s (s <= t).
        self.register_buffer("causal", torch.ones(context, context, dtype=torch.bool).tril(),
                             persistent=False)

    def blocks(self):
        return [getattr(self, "h%d" % l) for l in range(self.n_layer)]

    def param_names(self):
        """Every parameter name in the documented file order."""
        names = ["wte", "wpe"]
        for l in range(self.n_layer):
            names += ["h%d.%s" % (l, s) for s in ("ln1_w", "ln1_b", "qkv_w", "qkv_b", "proj_w",
                                                  "proj_b", "ln2_w", "ln2_b", "fc_w", "fc_b",
                                                  "fc2_w", "fc2_b")]
        names += ["lnf_w", "lnf_b"]
        if self.embed_norm in LAYERNORMS + ("rmsnorm",):
            names.append("en_w")
        if self.embed_norm in LAYERNORMS:
            names.append("en_b")
        if not self.tie_embeddings:
            names.append("lm_head")
        return names

    def set_rho(self):
        """From the current (initial) weights: scale's constant 1/rho, and for
        layernorm_matched the gain rho.  Returns rho."""
        rho = embed_rms(self.wte, self.wpe)
        self.embed_scale = 1.0 / rho
        if self.embed_norm == "layernorm_matched":
            with torch.no_grad():
                self.en_w.fill_(rho)
        return rho

    def ordered_params(self):
        d = dict(self.named_parameters())
        assert sorted(d) == sorted(self.param_names())
        return [(n, d[n]) for n in self.param_names()]

    def forward(self, tokens, targets=None):
        """tokens (B, T) int64 -> logits (B, T, V) [, mean cross-entropy loss]."""
        B, T = tokens.shape
        if T > self.context:
            raise ValueError("sequence length %d exceeds context %d" % (T, self.context))
        x = self.wte[tokens] + self.wpe[:T]
        if self.embed_norm in LAYERNORMS:
            x = layer_norm(x, self.en_w, self.en_b)
        elif self.embed_norm == "rmsnorm":
            x = rms_norm(x, self.en_w)
        elif self.embed_norm == "scale":
            x = x * self.embed_scale
        for block in self.blocks():
            x = block(x, self.causal)
        x = layer_norm(x, self.lnf_w, self.lnf_b)
        logits = x @ (self.wte if self.tie_embeddings else self.lm_head).t()
        if targets is None:
            return logits
        loss = F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T))
        return logits, loss


class ModBlock(nn.Module):
    """The same Pre-LN block written from PyTorch's default modules (nn.LayerNorm,
    nn.Linear, nn.GELU), as a model written without GPT-2's initialization has it."""

    def __init__(self, d_model, n_head):
        super().__init__()
        C = d_model
        self.n_head = n_head
        self.ln1 = nn.LayerNorm(C, eps=LN_EPS)
        self.qkv = nn.Linear(C, 3 * C)
        self.proj = nn.Linear(C, C)
        self.ln2 = nn.LayerNorm(C, eps=LN_EPS)
        self.fc = nn.Linear(C, 4 * C)
        self.gelu = nn.GELU(approximate="tanh")
        self.fc2 = nn.Linear(4 * C, C)

    def forward(self, x, causal):
        B, T, C = x.shape
        H = self.n_head
        hs = C // H
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, H, hs).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        scores = scores.masked_fill(~causal[:T, :T], float("-inf"))
        a = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, C)
        x = x + self.proj(a)
        return x + self.fc2(self.gelu(self.fc(self.ln2(x))))


class ModGPT(nn.Module):
    """The model of GPT above written from PyTorch's default modules (nn.Embedding for
    tokens and positions, nn.Linear, nn.LayerNorm; an untied output layer is a bias-free
    nn.Linear), keeping each module's default initialization: what the engine's
    init = torch draws (engine/gpt.h).  Embedding norms none, layernorm and rmsnorm.
    by_name() maps the engine's parameter names to the modules' parameters."""

    def __init__(self, vocab, context, n_layer, d_model, n_head, embed_norm="none",
                 tie_embeddings=True):
        super().__init__()
        if embed_norm not in ("none", "layernorm", "rmsnorm"):
            raise ValueError("ModGPT: embed_norm none, layernorm or rmsnorm, not %r"
                             % embed_norm)
        C = d_model
        self.n_layer, self.embed_norm, self.tie_embeddings = n_layer, embed_norm, tie_embeddings
        self.tok = nn.Embedding(vocab, C)
        self.pos = nn.Embedding(context, C)
        self.h = nn.ModuleList([ModBlock(C, n_head) for _ in range(n_layer)])
        self.lnf = nn.LayerNorm(C, eps=LN_EPS)
        if embed_norm == "layernorm":
            self.en = nn.LayerNorm(C, eps=LN_EPS)
        elif embed_norm == "rmsnorm":
            self.en_w = nn.Parameter(torch.ones(C))
        if not tie_embeddings:
            self.lm_head = nn.Linear(C, vocab, bias=False)
        self.register_buffer("causal", torch.ones(context, context, dtype=torch.bool).tril(),
                             persistent=False)

    def by_name(self):
        d = collections.OrderedDict([("wte", self.tok.weight), ("wpe", self.pos.weight)])
        for l, b in enumerate(self.h):
            for name, p in (("ln1_w", b.ln1.weight), ("ln1_b", b.ln1.bias),
                            ("qkv_w", b.qkv.weight), ("qkv_b", b.qkv.bias),
                            ("proj_w", b.proj.weight), ("proj_b", b.proj.bias),
                            ("ln2_w", b.ln2.weight), ("ln2_b", b.ln2.bias),
                            ("fc_w", b.fc.weight), ("fc_b", b.fc.bias),
                            ("fc2_w", b.fc2.weight), ("fc2_b", b.fc2.bias)):
                d["h%d.%s" % (l, name)] = p
        d["lnf_w"], d["lnf_b"] = self.lnf.weight, self.lnf.bias
        if self.embed_norm == "layernorm":
            d["en_w"], d["en_b"] = self.en.weight, self.en.bias
        elif self.embed_norm == "rmsnorm":
            d["en_w"] = self.en_w
        if not self.tie_embeddings:
            d["lm_head"] = self.lm_head.weight
        assert len(d) == len(list(self.parameters()))
        return d

    def param_names(self):
        return list(self.by_name())

    def ordered_params(self):
        return list(self.by_name().items())

    def forward(self, tokens, targets=None):
        B, T = tokens.shape
        x = self.tok(tokens) + self.pos(torch.arange(T))
        if self.embed_norm == "layernorm":
            x = self.en(x)
        elif self.embed_norm == "rmsnorm":
            x = rms_norm(x, self.en_w)
        for block in self.h:
            x = block(x, self.causal)
        x = self.lnf(x)
        logits = x @ self.tok.weight.t() if self.tie_embeddings else self.lm_head(x)
        if targets is None:
            return logits
        loss = F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(B * T))
        return logits, loss


def init_weights(model, gen, embed_init_std=0.02, tok_init_std=None, pos_init_std=None):
    """DESIGN.md init.  Draw order (one generator): wte, wpe, then per block qkv_w, proj_w,
    fc_w, fc2_w, then lm_head (untied).  Biases 0, norm gains 1, norm biases 0, then
    rho from the drawn embeddings (scale's constant, layernorm_matched's gain).  The
    embedding-norm parameters draw nothing, so the variants of one seed share every other
    weight exactly.  (The draws are PyTorch's, not the C engine's PCG32 ones.)"""
    std = 0.02
    resid_std = 0.02 / math.sqrt(2 * model.n_layer)
    tok = embed_init_std if tok_init_std is None else tok_init_std
    pos = embed_init_std if pos_init_std is None else pos_init_std
    with torch.no_grad():
        model.wte.normal_(0.0, 1.0, generator=gen).mul_(tok)
        model.wpe.normal_(0.0, 1.0, generator=gen).mul_(pos)
        for b in model.blocks():
            b.qkv_w.normal_(0.0, std, generator=gen)
            b.proj_w.normal_(0.0, resid_std, generator=gen)
            b.fc_w.normal_(0.0, std, generator=gen)
            b.fc2_w.normal_(0.0, resid_std, generator=gen)
            for p in (b.qkv_b, b.proj_b, b.fc_b, b.fc2_b, b.ln1_b, b.ln2_b):
                p.zero_()
            b.ln1_w.fill_(1.0)
            b.ln2_w.fill_(1.0)
        model.lnf_w.fill_(1.0)
        model.lnf_b.zero_()
        if model.embed_norm in LAYERNORMS + ("rmsnorm",):
            model.en_w.fill_(1.0)
        if model.embed_norm in LAYERNORMS:
            model.en_b.zero_()
        if not model.tie_embeddings:
            model.lm_head.normal_(0.0, std, generator=gen)
    model.set_rho()


def make_optimizer(model, lr, weight_decay, beta1, beta2, eps):
    """AdamW with decay on the 2-D parameters only (wte, wpe, Linear weights)."""
    named = model.ordered_params()
    decay = [p for _, p in named if p.dim() == 2]
    no_decay = [p for _, p in named if p.dim() != 2]
    groups = [{"params": decay, "weight_decay": weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(beta1, beta2), eps=eps)


def clip_grads(params, grad_clip):
    """Returns the pre-clip global L2 norm (a Python float, accumulated in float64).
    Exact rule: if grad_clip > 0 and norm > grad_clip: g *= grad_clip / norm  (no +1e-6)."""
    grads = [p.grad for p in params if p.grad is not None]
    norm = math.sqrt(sum(float(g.double().pow(2).sum()) for g in grads))
    if grad_clip > 0 and norm > grad_clip:
        scale = grad_clip / norm
        for g in grads:
            g.mul_(scale)
    return norm


def lr_at(it, iters, lr, min_lr, warmup):
    """Linear warmup lr*(it+1)/warmup for it < warmup, then cosine from lr (at it = warmup)
    to min_lr (at it = iters-1)."""
    if it < warmup:
        return lr * (it + 1) / warmup
    last = iters - 1
    progress = 1.0 if last <= warmup else (it - warmup) / (last - warmup)
    return min_lr + 0.5 * (lr - min_lr) * (1.0 + math.cos(math.pi * progress))


# --------------------------------------------------------------------------- parity

def die(msg, code=1):
    sys.stderr.write("gpt_ref: %s\n" % msg)
    sys.exit(code)


def cmd_parity(args):
    if len(args) != 2:
        die("usage: gpt_ref.py parity IN.rptf OUT.rptf", 2)
    src, dst = args
    torch.set_num_threads(1)
    inp = tensorfile.read(src)
    for k in ("config", "hparams", "tokens", "targets"):
        if k not in inp:
            die("%s: missing record %r" % (src, k))
    cfg = inp["config"]
    if cfg.dtype != np.int32 or cfg.shape != (8,):
        die("%s: config must be i32 [8], got %s %s" % (src, cfg.dtype, cfg.shape))
    V, Tctx, L, C, H, Bcfg, en, tie = (int(v) for v in cfg)
    if en not in range(len(EMBED_NORMS)):
        die("%s: embed_norm code %d (%s)" % (src, en, ", ".join(
            "%d %s" % (i, n) for i, n in enumerate(EMBED_NORMS))))
    if tie not in (0, 1):
        die("%s: tie flag %d (1 tied, 0 untied)" % (src, tie))
    hp = inp["hparams"]
    if hp.shape != (6,):
        die("%s: hparams must be f64 [6], got %s" % (src, hp.shape))
    lr, wd, beta1, beta2, eps, grad_clip = (float(v) for v in hp)
    tokens = inp["tokens"]
    targets = inp["targets"]
    if tokens.dtype != np.int32 or targets.dtype != np.int32 or tokens.ndim != 2 \
            or tokens.shape != targets.shape:
        die("%s: tokens and targets must be i32 (B,T) of the same shape" % src)
    B, T = tokens.shape
    if B != Bcfg or T > Tctx:
        die("%s: tokens are %dx%d but config says batch %d, context %d" % (src, B, T, Bcfg, Tctx))
    for k in ("tokens", "targets"):
        a = inp[k]
        if a.min() < 0 or a.max() >= V:
            die("%s: %s out of range [0, %d)" % (src, k, V))

    # a file with the record "modules" (i32 [1] = 1) is checked against ModGPT, the model
    # written from PyTorch's default modules (the engine's init = torch)
    modules = "modules" in inp and int(inp["modules"][0]) == 1
    if modules:
        model = ModGPT(V, Tctx, L, C, H, EMBED_NORMS[en], tie_embeddings=bool(tie)).double()
        params = model.by_name()
    else:
        model = GPT(V, Tctx, L, C, H, EMBED_NORMS[en], tie_embeddings=bool(tie)).double()
        params = dict(model.named_parameters())
    names = model.param_names()
    with torch.no_grad():
        for n in names:
            if n not in inp:
                die("%s: missing parameter %r" % (src, n))
            a = inp[n]
            if tuple(a.shape) != tuple(params[n].shape):
                die("%s: %s has shape %s, expected %s" % (src, n, a.shape,
                                                           tuple(params[n].shape)))
            if a.dtype not in (np.float32, np.float64):
                die("%s: %s must be f32 (or f64), got %s" % (src, n, a.dtype))
            params[n].copy_(torch.from_numpy(a.astype(np.float64)))
    extra = set(inp) - set(names) - {"config", "hparams", "tokens", "targets", "modules"}
    if extra:
        sys.stderr.write("gpt_ref: %s: ignoring records %s\n" % (src, sorted(extra)))
    # rho of the initial weights the engine wrote; layernorm_matched's gain comes from the
    # file (the engine's float32 rho), scale's constant from this float64 rho
    rho = embed_rms(params["wte"], params["wpe"])
    model.embed_scale = 1.0 / rho
    if EMBED_NORMS[en] == "layernorm_matched" and \
            not np.all(inp["en_w"] == np.float32(rho)):
        die("%s: en_w is not rho = %.17g rounded to float32" % (src, rho))

    tok = torch.from_numpy(tokens.astype(np.int64))
    tgt = torch.from_numpy(targets.astype(np.int64))
    logits, loss = model(tok, tgt)
    loss.backward()
    grads = {n: params[n].grad.detach().clone() for n in names}

    ordered = [params[n] for n in names]
    grad_norm = clip_grads(ordered, grad_clip)
    opt = make_optimizer(model, lr, wd, beta1, beta2, eps)
    opt.step()

    out = collections.OrderedDict()
    out["logits"] = logits.detach().numpy().astype(np.float64)
    out["loss"] = np.array([loss.item()], dtype=np.float64)
    # per-position cross-entropy (B, T): the engine's loss-by-position instrument
    per_pos = F.cross_entropy(logits.detach().reshape(-1, logits.shape[-1]),
                              tgt.reshape(-1), reduction="none")
    out["losses"] = per_pos.reshape(tgt.shape).numpy().astype(np.float64)
    out["grad_norm"] = np.array([grad_norm], dtype=np.float64)
    out["embed_rms"] = np.array([rho], dtype=np.float64)
    for n in names:
        out["grad." + n] = grads[n].numpy().astype(np.float64)
    for n in names:
        out["step." + n] = params[n].detach().numpy().astype(np.float64)
    tensorfile.write(dst, out)
    sys.stderr.write("gpt_ref parity: %s embed_norm=%s tied=%d%s rho=%.12g loss=%.12g "
                     "grad_norm=%.12g -> %s\n"
                     % (src, EMBED_NORMS[en], tie, " (default modules)" if modules else "",
                        rho, loss.item(), grad_norm, dst))


def cmd_torchinit(args):
    """torchinit OUT.json [V T L C H]: PyTorch's own default initialization of ModGPT
    (untied), drawn 8 times with torch.manual_seed(0): per engine tensor name its element
    count, mean, standard deviation and min and max over the draws, for the engine's test
    of init = torch (tests/c/test_engine.c) to compare its PCG draws with."""
    if len(args) not in (1, 6):
        die("usage: gpt_ref.py torchinit OUT.json [V T L C H]", 2)
    V, T, L, C, H = (int(a) for a in args[1:]) if len(args) == 6 else (65, 32, 2, 64, 4)
    torch.manual_seed(0)
    acc = collections.OrderedDict()
    for _ in range(8):
        model = ModGPT(V, T, L, C, H, "none", tie_embeddings=False)
        for n, p in model.by_name().items():
            acc.setdefault(n, []).append(p.detach().double().reshape(-1))
    out = collections.OrderedDict()
    out["torch"] = torch.__version__
    out["shape"] = {"V": V, "T": T, "L": L, "C": C, "H": H}
    tensors = collections.OrderedDict()
    for n, xs in acc.items():
        x = torch.cat(xs)
        tensors[n] = {"n": int(x.numel()), "mean": float(x.mean()), "std": float(x.std()),
                      "min": float(x.min()), "max": float(x.max())}
    out["tensors"] = tensors
    with open(args[0] + ".tmp", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    os.replace(args[0] + ".tmp", args[0])
    sys.stderr.write("gpt_ref torchinit: %d tensors -> %s\n" % (len(tensors), args[0]))


# --------------------------------------------------------------------------- train / bench

DEFAULTS = collections.OrderedDict([
    ("n_layer", 8), ("d_model", 128), ("n_head", 8), ("context", 128), ("batch", 16),
    ("iters", 300), ("lr", 3e-4), ("min_lr", 3e-5), ("warmup", 30), ("weight_decay", 0.1),
    ("beta1", 0.9), ("beta2", 0.95), ("eps", 1e-8), ("grad_clip", 1.0),
    ("embed_norm", "none"), ("embed_init_std", 0.02), ("seed", 1), ("threads", 1),
    ("data", os.path.join(REPO_ROOT, "data", "tinyshakespeare.txt")),
])


def parse_kv(args, allowed):
    cfg = collections.OrderedDict((k, DEFAULTS[k]) for k in allowed)
    for a in args:
        k, sep, v = a.partition("=")
        if not sep or k not in cfg:
            die("unknown argument %r (keys: %s)" % (a, " ".join(cfg)), 2)
        kind = type(DEFAULTS[k])
        try:
            cfg[k] = kind(v) if kind is not int else int(v, 10)
        except ValueError:
            die("bad value for %s: %r" % (k, v), 2)
    if "embed_norm" in cfg and cfg["embed_norm"] not in EMBED_NORMS:
        die("embed_norm must be one of %s" % " ".join(EMBED_NORMS), 2)
    for k in ("n_layer", "d_model", "n_head", "context", "batch", "iters", "threads"):
        if k in cfg and cfg[k] < 1:
            die("%s must be >= 1" % k, 2)
    return cfg


def set_threads(n):
    torch.set_num_threads(n)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set, or parallel work already started
        pass


def load_corpus(path):
    with open(path, "rb") as fp:
        raw = np.frombuffer(fp.read(), dtype=np.uint8)
    if raw.size < 2:
        die("%s: corpus too small" % path)
    vocab = np.unique(raw)                     # sorted distinct bytes
    lut = np.zeros(256, dtype=np.int64)
    lut[vocab] = np.arange(vocab.size)
    ids = torch.from_numpy(lut[raw])
    n_train = raw.size * 9 // 10               # first 90 % train, rest validation
    return vocab.size, ids[:n_train], ids[n_train:]


def sample_batch(train, B, T, gen):
    """B offsets uniform in [0, n_train - T - 1]; inputs train[o:o+T], targets shifted by 1."""
    off = torch.randint(0, train.numel() - T, (B,), generator=gen)
    idx = off[:, None] + torch.arange(T)
    return train[idx], train[idx + 1]


def train_step(model, opt, params, x, y, lr, grad_clip):
    for g in opt.param_groups:
        g["lr"] = lr
    opt.zero_grad(set_to_none=True)
    _, loss = model(x, y)
    loss.backward()
    norm = clip_grads(params, grad_clip)
    opt.step()
    return loss.item(), norm


@torch.no_grad()
def evaluate(model, val, T, chunk):
    """Whole validation split in floor((n_val-1)/T) non-overlapping windows."""
    model.eval()
    nw = (val.numel() - 1) // T
    if nw < 1:
        die("validation split (%d tokens) shorter than context + 1" % val.numel())
    X = val[:nw * T].view(nw, T)
    Y = val[1:nw * T + 1].view(nw, T)
    nll, hits = 0.0, 0
    for i in range(0, nw, chunk):
        x, y = X[i:i + chunk], Y[i:i + chunk]
        logits = model(x)
        logp = torch.log_softmax(logits, dim=-1)
        nll -= float(logp.gather(-1, y.unsqueeze(-1)).double().sum())
        hits += int((logits.argmax(dim=-1) == y).sum())
    model.train()
    n = nw * T
    return nll / n, hits / n


def cmd_train(args):
    t0 = time.perf_counter()
    cfg = parse_kv(args, list(DEFAULTS))
    set_threads(cfg["threads"])
    V, train, val = load_corpus(cfg["data"])
    T, B = cfg["context"], cfg["batch"]
    if train.numel() - T < 1:
        die("training split (%d tokens) shorter than context + 1" % train.numel())
    # Separate streams for init and data order.
    g_init = torch.Generator().manual_seed(cfg["seed"])
    g_data = torch.Generator().manual_seed(cfg["seed"] + 0x5DEECE66D)
    model = GPT(V, T, cfg["n_layer"], cfg["d_model"], cfg["n_head"], cfg["embed_norm"])
    init_weights(model, g_init, cfg["embed_init_std"])
    params = [p for _, p in model.ordered_params()]
    opt = make_optimizer(model, cfg["lr"], cfg["weight_decay"], cfg["beta1"], cfg["beta2"],
                         cfg["eps"])
    sys.stderr.write("gpt_ref train: %d params, vocab %d, %d train / %d val tokens, torch %s, "
                     "%d threads\n" % (sum(p.numel() for p in params), V, train.numel(),
                                       val.numel(), torch.__version__, cfg["threads"]))
    iters = cfg["iters"]
    t_train = time.perf_counter()
    for it in range(iters):
        lr = lr_at(it, iters, cfg["lr"], cfg["min_lr"], cfg["warmup"])
        x, y = sample_batch(train, B, T, g_data)
        loss, norm = train_step(model, opt, params, x, y, lr, cfg["grad_clip"])
        if not math.isfinite(loss):
            die("loss became %r at step %d" % (loss, it))
        if it % 10 == 0 or it == iters - 1:
            sys.stderr.write("step %d/%d lr %.3e loss %.4f grad_norm %.4f\n"
                             % (it, iters, lr, loss, norm))
    train_s = time.perf_counter() - t_train
    val_loss, val_acc = evaluate(model, val, T, max(B, 32))
    wall = time.perf_counter() - t0
    print(json.dumps({"val_loss": val_loss, "val_ppl": math.exp(val_loss), "val_acc": val_acc,
                      "tokens_per_s": iters * B * T / train_s, "wall_s": wall,
                      "threads": cfg["threads"], "iters": iters}))


def blas_library():
    """Path of the BLAS shared library this process loaded (Debian's torch links the
    libblas.so.3 alternative: netlib reference BLAS, OpenBLAS, BLIS...), or "unknown"."""
    try:
        with open("/proc/self/maps") as fp:
            for line in fp:
                path = line.split()[-1]
                if "blas" in os.path.basename(path).lower() and ".so" in path:
                    return os.path.realpath(path)
    except OSError:
        pass
    return "unknown"


def cmd_bench(args):
    steps = 20
    rest = []
    for a in args:
        if a.startswith("steps="):
            try:
                steps = int(a[6:], 10)
            except ValueError:
                die("bad value for steps: %r" % a[6:], 2)
        else:
            rest.append(a)
    cfg = parse_kv(rest, [k for k in DEFAULTS if k != "data"])
    if steps < 1:
        die("steps must be >= 1", 2)
    set_threads(cfg["threads"])
    # Synthetic stream with the Tiny Shakespeare vocabulary size: speed does not depend on
    # token values, and the bench then needs no corpus.
    V, T, B = 65, cfg["context"], cfg["batch"]
    gen = torch.Generator().manual_seed(cfg["seed"])
    stream = torch.randint(0, V, (1 << 20,), generator=gen)
    model = GPT(V, T, cfg["n_layer"], cfg["d_model"], cfg["n_head"], cfg["embed_norm"])
    init_weights(model, gen, cfg["embed_init_std"])
    params = [p for _, p in model.ordered_params()]
    opt = make_optimizer(model, cfg["lr"], cfg["weight_decay"], cfg["beta1"], cfg["beta2"],
                         cfg["eps"])
    for it in range(3):
        x, y = sample_batch(stream, B, T, gen)
        train_step(model, opt, params, x, y, cfg["lr"], cfg["grad_clip"])
    t0 = time.perf_counter()
    for it in range(steps):
        x, y = sample_batch(stream, B, T, gen)
        train_step(model, opt, params, x, y, cfg["lr"], cfg["grad_clip"])
    el = time.perf_counter() - t0
    print(json.dumps({"tokens_per_s": steps * B * T / el, "step_s": el / steps,
                      "threads": cfg["threads"], "torch": torch.__version__,
                      "blas": blas_library()}))


def main(argv):
    cmds = {"parity": cmd_parity, "train": cmd_train, "bench": cmd_bench,
            "torchinit": cmd_torchinit}
    if len(argv) < 2 or argv[1] not in cmds:
        die("usage: gpt_ref.py parity IN.rptf OUT.rptf | train [key=value ...] | "
            "bench [steps=N] [threads=K] | torchinit OUT.json [V T L C H]", 2)
    cmds[argv[1]](argv[2:])


if __name__ == "__main__":
    main(sys.argv)
