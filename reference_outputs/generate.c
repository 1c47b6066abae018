/* The golden-case generator: `make reference` rewrites every case of reference_outputs/ and its
   MANIFEST.json, byte for byte, from the library PRNG and the double-precision _ref forms.
   Built with -ffp-contract=off (DESIGN.md §3) so no compiler may fuse the reference arithmetic.
     generate DIR                   write the cases and DIR/MANIFEST.json
     generate --verify DIR          regenerate in memory; each file must be byte-identical, or (on
                                    another platform) agree tensor by tensor within 1e-12
     generate --verify-exact DIR    byte identity only (the reference platform: x86-64 Linux, gcc) */
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEN_VERSION "1"

/* ---- SHA-256 (FIPS 180-4), for the manifest ---------------------------------------------------- */
static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
static void sha256(const unsigned char *msg, size_t len, char hex[65]) {
    static const uint32_t K[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2 };
    uint32_t h[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    size_t nblk = (len + 9 + 63) / 64, b;
    int i;
    for (b = 0; b < nblk; b++) {
        unsigned char blk[64];
        uint32_t w[64], a[8];
        for (i = 0; i < 64; i++) {                 /* message, 0x80, zeros, bit length */
            size_t p = b * 64 + (size_t)i;
            blk[i] = p < len ? msg[p] : p == len ? 0x80 : 0;
        }
        if (b == nblk - 1)
            for (i = 0; i < 8; i++) blk[56 + i] = (unsigned char)(((uint64_t)len * 8) >> (56 - 8 * i));
        for (i = 0; i < 16; i++) w[i] = (uint32_t)blk[4 * i] << 24 | (uint32_t)blk[4 * i + 1] << 16 | (uint32_t)blk[4 * i + 2] << 8 | blk[4 * i + 3];
        for (i = 16; i < 64; i++)
            w[i] = w[i - 16] + (ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3)) + w[i - 7] +
                   (ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10));
        memcpy(a, h, sizeof a);
        for (i = 0; i < 64; i++) {
            uint32_t t1 = a[7] + (ror(a[4], 6) ^ ror(a[4], 11) ^ ror(a[4], 25)) + ((a[4] & a[5]) ^ (~a[4] & a[6])) + K[i] + w[i];
            uint32_t t2 = (ror(a[0], 2) ^ ror(a[0], 13) ^ ror(a[0], 22)) + ((a[0] & a[1]) ^ (a[0] & a[2]) ^ (a[1] & a[2]));
            memmove(a + 1, a, 7 * sizeof(uint32_t));
            a[4] += t1; a[0] = t1 + t2;
        }
        for (i = 0; i < 8; i++) h[i] += a[i];
    }
    for (i = 0; i < 8; i++) sprintf(hex + 8 * i, "%08x", h[i]);
}

/* ---- the cases ---------------------------------------------------------------------------------- */
typedef struct gcase {
    const char *id, *mixer;
    int64_t B, T, H, K, V, W;            /* conv: D in K, width in W; tcn: d in K, k in W, layers in H */
    int bias, silu, h0, norm, chunk;
    const char *fmap;
    int64_t offsets[6]; int n_seqs;      /* n_seqs > 0: variable lengths */
    uint64_t seed;
    const char *note;
} gcase;

static const gcase CASES[] = {
    { "shortconv_small",  "shortconv", 2, 17, 0, 5, 0, 4, 1, 1, 1, 0, 0, NULL, {0}, 0, 101, "bias, SiLU, initial state" },
    { "shortconv_medium", "shortconv", 1, 300, 0, 64, 0, 4, 1, 0, 0, 0, 0, NULL, {0}, 0, 102, "d = 64, no activation" },
    { "shortconv_varlen", "shortconv", 1, 60, 0, 7, 0, 3, 0, 1, 1, 0, 0, NULL, {0, 0, 13, 60}, 3, 103, "three sequences, one empty; width 3" },
    { "shortconv_t0",     "shortconv", 2, 0, 0, 4, 0, 4, 0, 0, 1, 0, 0, NULL, {0}, 0, 104, "T = 0: ht = h0" },
    { "shortconv_grad_varlen", "shortconv", 1, 90, 0, 19, 0, 4, 1, 1, 1, 0, 0, NULL, {0, 2, 2, 90}, 3, 105,
      "gradients (lattn_shortconv_ref_backward): bias, SiLU, initial states, three sequences (one shorter than the width, one empty)" },
    { "tcn_small",        "tcn",       2, 40, 4, 16, 0, 3, 0, 0, 0, 0, 0, NULL, {0}, 0, 201, "4 layers, k = 3, dilations 1 2 4 8" },
    { "linear_attn_small",  "linear_attn", 2, 37, 2, 16, 24, 0, 0, 0, 1, 0, 16, "identity", {0}, 0, 301, "initial state, chunk 16" },
    { "linear_attn_odd",    "linear_attn", 3, 65, 3, 37, 45, 0, 0, 0, 1, 0, 0, "identity", {0}, 0, 302, "K, V not multiples of the vector width" },
    { "linear_attn_medium", "linear_attn", 1, 300, 4, 64, 64, 0, 0, 0, 0, 0, 64, "identity", {0}, 0, 303, "chunk 64" },
    { "linear_attn_norm",   "linear_attn", 2, 100, 2, 16, 20, 0, 0, 0, 1, 1, 0, "elu1", {0}, 0, 304, "normalised, elu+1, initial state and key sum" },
    { "linear_attn_varlen", "linear_attn", 1, 150, 2, 24, 32, 0, 0, 0, 1, 0, 32, "identity", {0, 40, 40, 107, 150}, 4, 305, "four sequences, one empty" },
    { "linear_attn_t0",     "linear_attn", 1, 0, 2, 8, 8, 0, 0, 0, 1, 0, 0, "identity", {0}, 0, 306, "T = 0: ht = h0" },
    { "linear_attn_hedgehog", "linear_attn", 1, 50, 2, 8, 16, 0, 0, 0, 0, 0, 0, "hedgehog", {0}, 0, 307, "hedgehog feature map (K' = 2K)" },
    { "linear_attn_laplace", "linear_attn", 1, 200, 2, 96, 192, 0, 0, 0, 1, 0, 128, "relu", {0}, 0, 308, "Laplace head dims, chunk 128" },
    { "linear_attn_hedgehog_untied", "linear_attn", 2, 50, 2, 8, 16, 0, 0, 0, 1, 0, 16, "hedgehog_untied", {0}, 0, 309,
      "hedgehog maps untied as fla's default tie_feature_map_qk=False: the key map's own in.fmap_wk, in.fmap_bk; initial state" },
    { "gla_small",          "gla",         2, 70, 2, 24, 40, 0, 0, 0, 1, 0, 16, "identity", {0}, 0, 401, "per-key log gates logsigmoid(x)/4, initial state, chunk 16" },
    /* gradient cases ("_grad" in the id): the same inputs, then in.dout, in.dht and the out.d* gradients */
    { "gla_grad_small",     "gla",         2, 37, 2, 16, 24, 0, 0, 0, 1, 0, 0, "identity", {0}, 0, 411,
      "gradients (lattn_la_ref_backward): per-key log gates, initial state, dout and dht upstream" },
    { "simple_gla_grad_varlen", "simple_gla", 1, 60, 2, 16, 24, 0, 0, 0, 1, 0, 0, "identity", {0, 21, 21, 60}, 3, 412,
      "gradients: per-head log gates, three sequences (one empty), initial states" },
    { "linear_attn_grad_hedgehog", "linear_attn", 2, 29, 2, 8, 12, 0, 0, 0, 1, 1, 0, "hedgehog", {0}, 0, 413,
      "gradients through the hedgehog map (its weights too) and the normaliser (dzt upstream, dz0)" },
    { "gla_varlen",         "gla",         1, 150, 2, 20, 12, 0, 0, 0, 1, 0, 32, "identity", {0, 40, 40, 107, 150}, 4, 402, "four sequences, one empty" },
    { "simple_gla_small",   "simple_gla",  2, 65, 3, 16, 24, 0, 0, 0, 1, 0, 0, "identity", {0}, 0, 403, "per-head log gates, initial state" },
    { "retention_laplace",  "retention",   1, 300, 2, 96, 192, 0, 0, 0, 1, 0, 128, "identity", {0}, 0, 404, "fixed RetNet decays at the Laplace head dims, chunk 128" },
    /* retention with W = 1: retnet_decay (the decays computed in double, no in.g_gamma) */
    { "retention_double",   "retention",   1, 300, 4, 32, 16, 1, 0, 0, 1, 0, 64, "identity", {0}, 0, 405,
      "RetNet decays 1 - 2^(-5-h) computed in double (retnet_decay = 1), as fla's float64 retention; 4 heads, chunk 64" },
    /* scan: N in K; log_space in norm */
    { "scan_small",       "scan", 2, 257, 0, 37, 0, 0, 0, 0, 1, 0, 0, NULL, {0}, 0, 401, "decays in [0.5, 1), initial state" },
    { "scan_log_long",    "scan", 1, 9000, 0, 5, 0, 0, 0, 0, 1, 1, 0, NULL, {0}, 0, 402, "log-space decays; long T, few channels (the time-split path)" },
    { "scan_grad_log",    "scan", 2, 131, 0, 21, 0, 0, 0, 0, 1, 1, 0, NULL, {0}, 0, 421,
      "gradients (lattn_scan_ref_backward): log-space decays, initial state, dout and dht upstream; T past two blocks of 64" },
    /* ssm: D in K, N in V, G in W */
    { "ssm_small",        "ssm", 2, 65, 0, 37, 5, 1, 1, 1, 1, 0, 0, NULL, {0}, 0, 501, "Dskip, dt_bias, SiLU(z) gate, initial state" },
    { "ssm_groups_varlen", "ssm", 1, 120, 0, 36, 8, 3, 0, 0, 1, 0, 0, NULL, {0, 50, 50, 120}, 3, 502, "3 groups of B/C, three sequences (one empty)" },
    { "ssm_grad_small",   "ssm", 2, 70, 0, 20, 5, 2, 1, 1, 1, 0, 0, NULL, {0}, 0, 503,
      "gradients (lattn_ssm_ref_backward) of every parameter: 2 groups, Dskip, dt_bias, SiLU(z) gate, initial state, dout and dht" },
    /* s4d: D in K, N in V; complex modes in norm; h0 in h0; a state out in silu */
    { "s4d_complex_state", "s4d", 2, 129, 0, 4, 8, 0, 0, 1, 1, 1, 0, NULL, {0}, 0, 601, "S4D-Lin complex modes, initial and final state" },
    { "s4d_real_conv",     "s4d", 1, 300, 0, 3, 6, 0, 0, 0, 1, 0, 0, NULL, {0}, 0, 602, "real modes, initial state, y only (all forms incl. FFT and direct conv)" },
    { "s4d_complex_conv",  "s4d", 2, 1000, 0, 2, 16, 0, 0, 0, 0, 1, 0, NULL, {0}, 0, 603, "S4D-Lin complex modes, y only (all forms incl. FFT and direct conv)" },
    { "s4d_grad_complex",  "s4d", 2, 150, 0, 3, 6, 0, 0, 0, 1, 1, 0, NULL, {0}, 0, 604,
      "gradients (lattn_s4d_ref_backward) of every parameter: complex modes, initial state, dout and dht; T past two blocks of 64" },
    /* gdr: gate kind in bias (0 none, 1 per head, 2 per key); W > 0: separate erase key e, write
       scale c and W injections (the full GDR+I core); q, k, e L2-normalised in the kernel */
    { "delta_rule_small",  "gdr", 2, 45, 2, 16, 24, 0, 0, 0, 1, 0, 16, NULL, {0}, 0, 801, "delta rule, initial state, chunk 16" },
    { "delta_rule_varlen", "gdr", 1, 150, 2, 20, 12, 0, 0, 0, 1, 0, 32, NULL, {0, 40, 40, 107, 150}, 4, 802, "delta rule, four sequences (one empty), chunk 32" },
    { "gdn_small",         "gdr", 2, 70, 2, 24, 40, 0, 1, 0, 1, 0, 16, NULL, {0}, 0, 803, "Gated DeltaNet, per-head log gates logsigmoid(x)/4, initial state, chunk 16" },
    { "gdn_per_key",       "gdr", 1, 50, 2, 16, 16, 0, 2, 0, 1, 0, 16, NULL, {0}, 0, 804, "Gated DeltaNet with per-key log gates logsigmoid(x)/4, initial state, chunk 16" },
    { "gdr_injections",    "gdr", 1, 65, 2, 16, 20, 2, 1, 0, 1, 0, 16, NULL, {0}, 0, 805, "GDR+I: erase key e, write scale c, 2 injections per token, per-head gates, chunk 16" },
    { "gdr_grad_full",     "gdr", 1, 40, 2, 8, 6, 2, 1, 0, 1, 0, 0, NULL, {0, 17, 17, 40}, 3, 806,
      "gradients (lattn_gdr_ref_backward) of every input of GDR+I: erase key, write scale, 2 injections, per-head gates, three sequences (one empty), dout and dht" },
    /* laplace_layer: heads in H, dk in K, dv in V, conv width in W, D in chunk, FFN 5D/3 */
    { "laplace_layer_small", "laplace_layer", 2, 21, 2, 10, 12, 4, 0, 0, 1, 0, 24, NULL, {0}, 0, 701,
      "one Laplace layer (D 24, 2 heads of 10 x 12, FFN 40, RMSNorm-SiLU output gate), initial state" },
    { "laplace_layer_grad_small", "laplace_layer", 2, 21, 2, 10, 12, 4, 0, 0, 0, 0, 24, NULL, {0}, 0, 702,
      "the gradients (lattn_laplace_backward_ref) of one Laplace layer under an upstream dout, fresh sequences: dx and every weight's" },
    /* prism_p1 / prism_p2: D in K, heads in H, solver steps in W, chunk in chunk; R = 128, Kc = 5, gate rank 8 */
    { "prism_p1_c32",  "prism_p1", 2, 64, 2, 32, 0, 2, 0, 0, 0, 0, 32, NULL, {0}, 0, 1001,
      "PRISM P1 (the official LM block, code-exact) at chunk 32; the same weights and input as prism_p1_c64" },
    { "prism_p1_c64",  "prism_p1", 2, 64, 2, 32, 0, 2, 0, 0, 0, 0, 64, NULL, {0}, 0, 1001,
      "PRISM P1 at chunk 64 = min(128, T): the official default; differs from prism_p1_c32 (the code's chunk dependence)" },
    { "prism_p2_small", "prism_p2", 2, 37, 2, 32, 0, 2, 0, 0, 1, 0, 16, NULL, {0}, 0, 1002,
      "PRISM P2 (per-token, on the delta-rule core), initial state, chunk 16" },
    { "prism_p1_grad_c16", "prism_p1", 2, 48, 2, 24, 0, 2, 0, 0, 0, 0, 16, NULL, {0}, 0, 1004,
      "the gradients (lattn_prism_p1_backward_ref) of PRISM P1 at chunk 16 (three chunks): dx and every weight's under the official names" },
    { "prism_p2_grad_small", "prism_p2", 2, 37, 2, 32, 0, 2, 0, 0, 0, 0, 16, NULL, {0}, 0, 1005,
      "the gradients (lattn_prism_p2_backward_ref) of a PRISM P2 block, fresh sequences, chunk 16 for the float32 form: dx and every weight's" },
    /* prism_p0: D in K, heads in H, solver steps in W, conv width 4 */
    { "prism_p0_small", "prism_p0", 2, 33, 3, 36, 0, 3, 0, 0, 1, 0, 16, NULL, {0}, 0, 1003,
      "PRISM P0 (the paper's model with lattn's documented choices), 3 solver steps, initial state" },
    { "prism_p0_grad_small", "prism_p0", 2, 33, 3, 36, 0, 3, 0, 0, 0, 0, 16, NULL, {0}, 0, 1006,
      "the gradients (lattn_prism_p0_backward_ref) of a PRISM P0 block, 3 solver steps, fresh sequences: dx and every weight's" },
    /* gdn_layer: heads in H, K in K, V in V, conv width in W, D in chunk */
    { "gdn_layer_small", "gdn_layer", 2, 21, 2, 10, 12, 4, 0, 0, 1, 0, 24, NULL, {0}, 0, 901,
      "one Gated DeltaNet layer (D 24, 2 heads of 10 x 12, fla initialisation of A_log and dt_bias), initial state" },
    { "gdn_layer_grad_small", "gdn_layer", 2, 21, 2, 10, 12, 4, 0, 0, 0, 0, 24, NULL, {0}, 0, 902,
      "the gradients (lattn_gdn_backward_ref) of one Gated DeltaNet layer, fresh sequences: dx and every weight's (fla's names)" },
    /* attention: H_kv in bias, window in W (norm = 1: windowed, else causal) */
    { "attention_causal", "attention", 2, 150, 4, 48, 40, 0, 2, 0, 0, 0, 64, NULL, {0}, 0, 1101,
      "causal softmax attention, 4 query heads over 2 KV heads (GQA), K 48, V 40, T not a multiple of the tile" },
    { "attention_window", "attention", 1, 200, 2, 32, 32, 17, 1, 0, 0, 1, 32, NULL, {0, 70, 70, 200}, 3, 1102,
      "causal sliding window of 17 past keys (inclusive: 18 keys), multi-query (1 KV head), three sequences (one empty)" },
    /* transformer: B, T; the small configuration of lattn_tf_config_small */
    { "transformer_small", "transformer", 2, 33, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, {0}, 0, 1201,
      "pre-norm transformer (2 layers, d 64, 4 heads of 16 over 2 KV heads, RoPE, SwiGLU 192, tied vocab 256): logits and loss" },
    /* sps: the transformer_small model; variant in H (lattn_sps_variant), window in W; <predict> 255,
       EOS 254, pad 253; tokens with EOS and left pads */
    { "transformer_grad_small", "transformer", 2, 17, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, {0}, 0, 1202,
      "gradients (lattn_tf_backward_ref) of the loss: every weight of the small transformer (RMSNorm, RoPE, grouped-query attention, SwiGLU, the tied embedding)" },
    { "sps_standard", "sps", 2, 29, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, {0}, 0, 1301,
      "SPS paper's Standard variant (documents at EOS, loss without EOS and pad positions)" },
    { "sps_w2", "sps", 2, 29, 1, 0, 0, 2, 0, 0, 0, 0, 0, NULL, {0}, 0, 1302,
      "SPS with window w = 2: persistent x, windowed <predict> (inclusive window), logits from the <predict> slots" },
    { "sps_2x_memory", "sps", 2, 29, 2, 0, 0, 0, 0, 0, 0, 0, 0, NULL, {0}, 0, 1303,
      "2x Memory: SPS with every <predict> kept" },
    { "sps_delayed_w1", "sps", 2, 29, 3, 0, 0, 1, 0, 0, 0, 0, 0, NULL, {0}, 0, 1304,
      "Delayed State, w = 1: persistent <predict>, windowed x, logits from the <predict> slots" },
    { "sps_grad_w2", "sps", 2, 21, 1, 0, 0, 2, 0, 0, 0, 0, 0, NULL, {0}, 0, 1306,
      "gradients (lattn_sps_backward_ref) of the loss: every weight of the small transformer run as SPS (w = 2; EOS and left pads)" },
    { "sps_reverse_w0", "sps", 2, 29, 4, 0, 0, 0, 0, 0, 0, 0, 0, NULL, {0}, 0, 1305,
      "Reverse SPS, w = 0: the Delayed State mask, logits from the x slots" },
    /* ttt_layer: heads in H, D in K, mini-batch in W, TTT-MLP in bias, use_gate in norm */
    { "ttt_linear_b16", "ttt_layer", 2, 37, 4, 32, 0, 16, 0, 0, 0, 0, 0, NULL, {0}, 0, 1401,
      "TTT-Linear layer (D 32, 4 heads of 8), mini-batch 16: two full mini-batches and an open one of 5; the second sequence starts inside a mini-batch" },
    { "ttt_linear_b1", "ttt_layer", 2, 37, 4, 32, 0, 1, 0, 0, 0, 0, 0, NULL, {0}, 0, 1402,
      "TTT-Linear layer, mini-batch 1 (online gradient descent; RoPE is the identity)" },
    { "ttt_mlp_b16", "ttt_layer", 2, 37, 4, 32, 0, 16, 1, 0, 0, 0, 0, NULL, {0}, 0, 1403,
      "TTT-MLP layer (inner MLP 8 -> 32 -> 8), mini-batch 16, no output gate; the second sequence starts inside a mini-batch" },
    { "ttt_linear_gate_b16", "ttt_layer", 2, 37, 4, 32, 0, 16, 0, 0, 0, 1, 0, NULL, {0}, 0, 1405,
      "TTT-Linear layer, mini-batch 16, with the gelu_tanh output gate (use_gate: g_proj.weight)" },
    { "ttt_mlp_gate_b16", "ttt_layer", 2, 37, 4, 32, 0, 16, 1, 0, 0, 1, 0, NULL, {0}, 0, 1406,
      "TTT-MLP layer, mini-batch 16, with the gelu_tanh output gate (use_gate: g_proj.weight)" },
    { "ttt_mlp_b1", "ttt_layer", 2, 37, 4, 32, 0, 1, 1, 0, 0, 0, 0, NULL, {0}, 0, 1404,
      "TTT-MLP layer, mini-batch 1" },
    { "ttt_mlp_gate_grad_b16", "ttt_layer", 2, 37, 4, 32, 0, 16, 1, 0, 0, 1, 0, NULL, {0}, 0, 1407,
      "the gradients of a TTT-MLP layer with the output gate, mini-batch 16 (T = 37: a 5-token last mini-batch): dx and every weight's, fresh sequences" }
};
#define NCASES ((int)(sizeof CASES / sizeof CASES[0]))

/* One case as a safetensors buffer (inputs, expected float32 outputs, float64 copies). */
typedef struct gout { lattn_st_entry e[96]; int n; void *own[96]; int no; int64_t shp[96][5]; char nm[96][64]; const char *meta[64]; int nm_meta; char mbuf[20][64]; int nmb; } gout;
static void *keep(gout *g, size_t bytes) { void *p = calloc(bytes ? bytes : 1, 1); g->own[g->no++] = p; return p; }
static void add(gout *g, const char *name, lattn_dtype dt, int nd, const int64_t *shape, const void *data) {
    lattn_st_entry *e = &g->e[g->n];
    int i;
    snprintf(g->nm[g->n], sizeof g->nm[0], "%s", name);
    for (i = 0; i < nd; i++) g->shp[g->n][i] = shape[i];
    e->name = g->nm[g->n]; e->dtype = dt; e->ndim = nd; e->shape = g->shp[g->n]; e->data = data;
    g->n++;
}
static float *rand_f(gout *g, lattn_rng *r, size_t n, int normal, float lo, float hi) {
    float *p = (float *)keep(g, n * sizeof(float));
    if (normal) lattn_rng_fill_normal(r, p, n, 0.0f, 1.0f); else lattn_rng_fill_uniform(r, p, n, lo, hi);
    return p;
}
/* Metadata key k = v (a key set again takes the new value in its place). */
static void meta(gout *g, const char *k, const char *v) {
    int i;
    for (i = 0; i < g->nm_meta; i++) if (strcmp(g->meta[2 * i], k) == 0) { g->meta[2 * i + 1] = v; return; }
    if (g->nm_meta == 32) { fprintf(stderr, "generate: more than 32 metadata entries\n"); exit(1); }
    g->meta[2 * g->nm_meta] = k; g->meta[2 * g->nm_meta + 1] = v; g->nm_meta++; }
static const char *num(gout *g, double x) { snprintf(g->mbuf[g->nmb], 64, "%.17g", x); return g->mbuf[g->nmb++]; }
/* A gradient output of a gradient case: out.<name> (float32) and out64.<name> (float64), added
   now and filled by the _ref_backward call that follows. */
static void add_grad(gout *g, const char *name, int nd, const int64_t *shape, float **f, double **d) {
    size_t n = 1;
    int i;
    char nm[64];
    for (i = 0; i < nd; i++) n *= (size_t)shape[i];
    *f = (float *)keep(g, n * sizeof(float));
    *d = (double *)keep(g, n * sizeof(double));
    snprintf(nm, sizeof nm, "out.%s", name); add(g, nm, LATTN_DTYPE_F32, nd, shape, *f);
    snprintf(nm, sizeof nm, "out64.%s", name); add(g, nm, LATTN_DTYPE_F64, nd, shape, *d);
}

/* A layer's weight tensor, stored as in.<name>. */
static void add_weight(gout *g, const lattn_tensor *t, const float *w) {
    char nm[80];
    snprintf(nm, sizeof nm, "in.%s", t->name);
    add(g, nm, LATTN_DTYPE_F32, t->ndim, t->shape, w);
}
/* A layer case's inputs: x [B][T][D] ~ N(0, 1) and state0 [B][SF] ~ N(0, s0_scale²), stored as in.x
   and in.state0; *y and *s (a copy of state0) are what the reference form then writes. */
typedef struct { int64_t sx[3], ss[2]; float *x, *y, *s; } layer_io;
static void layer_inputs(gout *g, lattn_rng *r, int64_t B, int64_t T, int64_t D, int64_t SF, float s0_scale, layer_io *io) {
    float *s0;
    size_t j;
    io->sx[0] = B; io->sx[1] = T; io->sx[2] = D; io->ss[0] = B; io->ss[1] = SF;
    io->x = rand_f(g, r, (size_t)(B * T * D), 1, 0, 0); s0 = rand_f(g, r, (size_t)(B * SF), 1, 0, 0);
    io->y = (float *)keep(g, (size_t)(B * T * D) * 4); io->s = (float *)keep(g, (size_t)(B * SF) * 4);
    if (s0_scale != 1.0f)
        for (j = 0; j < (size_t)(B * SF); j++) s0[j] *= s0_scale;
    add(g, "in.x", LATTN_DTYPE_F32, 3, io->sx, io->x); add(g, "in.state0", LATTN_DTYPE_F32, 2, io->ss, s0);
    memcpy(io->s, s0, (size_t)(B * SF) * 4);
}
static void layer_outputs(gout *g, const layer_io *io) {
    add(g, "out.y", LATTN_DTYPE_F32, 3, io->sx, io->y); add(g, "out.state", LATTN_DTYPE_F32, 2, io->ss, io->s);
}

static int64_t nseq(const gcase *c) { return c->n_seqs ? c->n_seqs : c->B; }
/* A builder's end: 1 when the reference ran, else the error on stderr and 0. */
static int report(const gcase *c, lattn_ctx *ctx, lattn_status st) {
    if (st == LATTN_OK) return 1;
    fprintf(stderr, "%s: %s\n", c->id, lattn_ctx_error(ctx));
    return 0;
}

/* ---- one builder per mixer: draws the inputs in file order, runs the _ref form, adds the outputs -- */
static int build_shortconv(const gcase *c, gout *g, lattn_ctx *ctx, lattn_rng *rng) {
    const int64_t B = c->B, T = c->T;
    const int64_t n = nseq(c);
    lattn_status st = LATTN_OK;
    lattn_shortconv_args a;
    int64_t D = c->K, W = c->W, sx[3], sw[2], sh[3], sb[1];
    memset(&a, 0, sizeof a);
    sx[0] = B; sx[1] = T; sx[2] = D; sw[0] = D; sw[1] = W; sh[0] = n; sh[1] = D; sh[2] = W; sb[0] = D;
    meta(g, "layout", "x, y: [B][T][D]; w: [D][W] (w[c][W-1] multiplies the current token); bias: [D]; h0, ht: [N][D][W] newest last");
    meta(g, "silu", c->silu ? "1" : "0");
    a.B = B; a.T = T; a.D = D; a.W = W; a.silu = c->silu;
    a.x = rand_f(g, rng, (size_t)(B * T * D), 1, 0, 0); add(g, "in.x", LATTN_DTYPE_F32, 3, sx, a.x);
    a.w = rand_f(g, rng, (size_t)(D * W), 0, -0.5f, 0.5f); add(g, "in.w", LATTN_DTYPE_F32, 2, sw, a.w);
    if (c->bias) { a.bias = rand_f(g, rng, (size_t)D, 0, -0.5f, 0.5f); add(g, "in.bias", LATTN_DTYPE_F32, 1, sb, a.bias); }
    if (c->h0) { a.h0 = rand_f(g, rng, (size_t)(n * D * W), 1, 0, 0); add(g, "in.h0", LATTN_DTYPE_F32, 3, sh, a.h0); }
    if (c->n_seqs) { a.offsets = c->offsets; a.n_seqs = c->n_seqs; }
    a.y = (float *)keep(g, (size_t)(B * T * D) * 4); a.ht = (float *)keep(g, (size_t)(n * D * W) * 4);
    st = lattn_shortconv_ref(ctx, &a);
    if (!strstr(c->id, "_grad")) {   /* a gradient case holds the gradients only */
        add(g, "out.y", LATTN_DTYPE_F32, 3, sx, a.y);
        add(g, "out.ht", LATTN_DTYPE_F32, 3, sh, a.ht);
    }
    if (st == LATTN_OK && strstr(c->id, "_grad")) {   /* upstream dout, dht; every input's gradient */
        lattn_shortconv_grads gr = {0};
        meta(g, "pass", "backward");
        gr.dout = rand_f(g, rng, (size_t)(B * T * D), 1, 0, 0); add(g, "in.dout", LATTN_DTYPE_F32, 3, sx, gr.dout);
        gr.dht = rand_f(g, rng, (size_t)(n * D * W), 1, 0, 0); add(g, "in.dht", LATTN_DTYPE_F32, 3, sh, gr.dht);
        add_grad(g, "dx", 3, sx, &gr.dx, &gr.dx64);
        add_grad(g, "dw", 2, sw, &gr.dw, &gr.dw64);
        if (a.bias) add_grad(g, "dbias", 1, sb, &gr.dbias, &gr.dbias64);
        if (a.h0) add_grad(g, "dh0", 3, sh, &gr.dh0, &gr.dh064);
        st = lattn_shortconv_ref_backward(ctx, &a, &gr);
    }
    return report(c, ctx, st);
}

static int build_tcn(const gcase *c, gout *g, lattn_ctx *ctx, lattn_rng *rng) {
    const int64_t B = c->B, T = c->T;
    lattn_status st = LATTN_OK;
    lattn_tcn_demo m;
    lattn_tcn_args a;
    int64_t d = c->K, k = c->W, L = c->H, sx[3], sw[3], sd[1], l;
    char key[4][24];
    memset(&a, 0, sizeof a);
    sx[0] = B; sx[1] = T; sx[2] = d; sw[0] = d; sw[1] = d; sw[2] = k; sd[0] = d;
    meta(g, "layout", "x, y: [B][T][D]; in.w.<l>: [D_out][D_in][W] (PyTorch Conv1d; W = the metadata k); in.b.<l>, in.ln_w.<l>, in.ln_b.<l>: [D]; zero history");
    meta(g, "k", num(g, (double)k)); meta(g, "layers", num(g, (double)L));
    lattn_tcn_demo_config dc;
    dc.d_in = 1; dc.D = d; dc.W = k; dc.n_layers = L;
    lattn_tcn_demo_init(ctx, &m, &dc, c->seed);
    for (l = 0; l < L; l++) {                 /* LayerNorm away from its 1/0 init */
        float *lw = (float *)keep(g, (size_t)d * 4), *lb = (float *)keep(g, (size_t)d * 4);
        float *w = (float *)keep(g, (size_t)(d * d * k) * 4), *b = (float *)keep(g, (size_t)d * 4);
        lattn_rng_fill_uniform(rng, lw, (size_t)d, 0.5f, 1.5f); lattn_rng_fill_uniform(rng, lb, (size_t)d, -0.2f, 0.2f);
        memcpy(w, m.layers[l].w, (size_t)(d * d * k) * 4); memcpy(b, m.layers[l].b, (size_t)d * 4);
        m.layers[l].ln_w = lw; m.layers[l].ln_b = lb; m.layers[l].w = w; m.layers[l].b = b;
        snprintf(key[0], 24, "in.w.%d", (int)l); snprintf(key[1], 24, "in.b.%d", (int)l);
        snprintf(key[2], 24, "in.ln_w.%d", (int)l); snprintf(key[3], 24, "in.ln_b.%d", (int)l);
        add(g, key[0], LATTN_DTYPE_F32, 3, sw, w); add(g, key[1], LATTN_DTYPE_F32, 1, sd, b);
        add(g, key[2], LATTN_DTYPE_F32, 1, sd, lw); add(g, key[3], LATTN_DTYPE_F32, 1, sd, lb);
    }
    a.B = B; a.T = T; a.D = d; a.W = k; a.n_layers = L; a.layers = m.layers;
    a.x = rand_f(g, rng, (size_t)(B * T * d), 1, 0, 0); add(g, "in.x", LATTN_DTYPE_F32, 3, sx, a.x);
    a.y = (float *)keep(g, (size_t)(B * T * d) * 4);
    st = lattn_tcn_ref(ctx, &a);
    add(g, "out.y", LATTN_DTYPE_F32, 3, sx, a.y);
    lattn_tcn_demo_free(ctx, &m);
    return report(c, ctx, st);
}

static int build_scan(const gcase *c, gout *g, lattn_ctx *ctx, lattn_rng *rng) {
    const int64_t B = c->B, T = c->T;
    lattn_status st = LATTN_OK;
    lattn_scan_args a;
    int64_t N = c->K, sx[3], sh[2];
    size_t i, cnt = (size_t)(B * T * N);
    float *dec;
    memset(&a, 0, sizeof a);
    sx[0] = B; sx[1] = T; sx[2] = N; sh[0] = B; sh[1] = N;
    meta(g, "layout", "a, b, y: [B][T][N]; h0, ht: [B][N]; y_t = h_t = a_t h_{t-1} + b_t (a = exp(in.a) when log_space)");
    meta(g, "log_space", c->norm ? "1" : "0");
    a.B = B; a.T = T; a.N = N; a.log_space = c->norm;
    dec = rand_f(g, rng, cnt, 0, 0.5f, 1.0f);
    if (c->norm) for (i = 0; i < cnt; i++) dec[i] = logf(dec[i]);
    a.a = dec; add(g, "in.a", LATTN_DTYPE_F32, 3, sx, a.a);
    a.b = rand_f(g, rng, cnt, 1, 0, 0); add(g, "in.b", LATTN_DTYPE_F32, 3, sx, a.b);
    if (c->h0) { a.h0 = rand_f(g, rng, (size_t)(B * N), 1, 0, 0); add(g, "in.h0", LATTN_DTYPE_F32, 2, sh, a.h0); }
    a.y = (float *)keep(g, cnt * 4); a.ht = (float *)keep(g, (size_t)(B * N) * 4);
    st = lattn_scan_ref(ctx, &a);
    if (!strstr(c->id, "_grad")) {   /* a gradient case holds the gradients only */
        add(g, "out.y", LATTN_DTYPE_F32, 3, sx, a.y);
        add(g, "out.ht", LATTN_DTYPE_F32, 2, sh, a.ht);
    }
    if (st == LATTN_OK && strstr(c->id, "_grad")) {
        lattn_scan_grads gr = {0};
        meta(g, "pass", "backward");
        gr.dout = rand_f(g, rng, cnt, 1, 0, 0); add(g, "in.dout", LATTN_DTYPE_F32, 3, sx, gr.dout);
        gr.dht = rand_f(g, rng, (size_t)(B * N), 1, 0, 0); add(g, "in.dht", LATTN_DTYPE_F32, 2, sh, gr.dht);
        add_grad(g, "da", 3, sx, &gr.da, &gr.da64);
        add_grad(g, "db", 3, sx, &gr.db, &gr.db64);
        if (a.h0) add_grad(g, "dh0", 2, sh, &gr.dh0, &gr.dh064);
        st = lattn_scan_ref_backward(ctx, &a, &gr);
    }
    return report(c, ctx, st);
}

static int build_ssm(const gcase *c, gout *g, lattn_ctx *ctx, lattn_rng *rng) {
    const int64_t B = c->B, T = c->T;
    const int64_t n = nseq(c);
    lattn_status st = LATTN_OK;
    lattn_ssm_args a;
    int64_t D = c->K, N = c->V, G = c->W, sx[3], sa[2], sb[4], sd[1], sh[3];
    memset(&a, 0, sizeof a);
    sx[0] = B; sx[1] = T; sx[2] = D; sa[0] = D; sa[1] = N; sb[0] = B; sb[1] = T; sb[2] = G; sb[3] = N;
    sd[0] = D; sh[0] = n; sh[1] = D; sh[2] = N;
    meta(g, "layout", "x, dt, z, y: [B][T][D]; A: [D][N]; Bm, Cm: [B][T][G][N]; Dskip, dt_bias: [D]; h0, ht: [N_seqs][D][N]");
    meta(g, "groups", num(g, (double)G)); meta(g, "dt_softplus", "1");
    a.B = B; a.T = T; a.D = D; a.N = N; a.G = G; a.dt_softplus = 1;
    a.x = rand_f(g, rng, (size_t)(B * T * D), 1, 0, 0); add(g, "in.x", LATTN_DTYPE_F32, 3, sx, a.x);
    a.dt = rand_f(g, rng, (size_t)(B * T * D), 1, 0, 0); add(g, "in.dt", LATTN_DTYPE_F32, 3, sx, a.dt);
    a.A = rand_f(g, rng, (size_t)(D * N), 0, -4.0f, -0.01f); add(g, "in.A", LATTN_DTYPE_F32, 2, sa, a.A);
    a.Bm = rand_f(g, rng, (size_t)(B * T * G * N), 1, 0, 0); add(g, "in.Bm", LATTN_DTYPE_F32, 4, sb, a.Bm);
    a.Cm = rand_f(g, rng, (size_t)(B * T * G * N), 1, 0, 0); add(g, "in.Cm", LATTN_DTYPE_F32, 4, sb, a.Cm);
    if (c->bias) {
        a.Dskip = rand_f(g, rng, (size_t)D, 1, 0, 0); add(g, "in.Dskip", LATTN_DTYPE_F32, 1, sd, a.Dskip);
        a.dt_bias = rand_f(g, rng, (size_t)D, 0, -2.0f, 0.5f); add(g, "in.dt_bias", LATTN_DTYPE_F32, 1, sd, a.dt_bias);
    }
    if (c->silu) { a.z = rand_f(g, rng, (size_t)(B * T * D), 1, 0, 0); add(g, "in.z", LATTN_DTYPE_F32, 3, sx, a.z); }
    if (c->h0) { a.h0 = rand_f(g, rng, (size_t)(n * D * N), 1, 0, 0); add(g, "in.h0", LATTN_DTYPE_F32, 3, sh, a.h0); }
    if (c->n_seqs) { a.offsets = c->offsets; a.n_seqs = c->n_seqs; }
    a.y = (float *)keep(g, (size_t)(B * T * D) * 4); a.ht = (float *)keep(g, (size_t)(n * D * N) * 4);
    st = lattn_ssm_ref(ctx, &a);
    if (!strstr(c->id, "_grad")) {   /* a gradient case holds the gradients only */
        add(g, "out.y", LATTN_DTYPE_F32, 3, sx, a.y);
        add(g, "out.ht", LATTN_DTYPE_F32, 3, sh, a.ht);
    }
    if (st == LATTN_OK && strstr(c->id, "_grad")) {
        lattn_ssm_grads gr = {0};
        meta(g, "pass", "backward");
        gr.dout = rand_f(g, rng, (size_t)(B * T * D), 1, 0, 0); add(g, "in.dout", LATTN_DTYPE_F32, 3, sx, gr.dout);
        gr.dht = rand_f(g, rng, (size_t)(n * D * N), 1, 0, 0); add(g, "in.dht", LATTN_DTYPE_F32, 3, sh, gr.dht);
        add_grad(g, "dx", 3, sx, &gr.dx, &gr.dx64);
        add_grad(g, "ddt", 3, sx, &gr.ddt, &gr.ddt64);
        add_grad(g, "dA", 2, sa, &gr.dA, &gr.dA64);
        add_grad(g, "dBm", 4, sb, &gr.dBm, &gr.dBm64);
        add_grad(g, "dCm", 4, sb, &gr.dCm, &gr.dCm64);
        if (a.Dskip) add_grad(g, "dDskip", 1, sd, &gr.dDskip, &gr.dDskip64);
        if (a.dt_bias) add_grad(g, "ddt_bias", 1, sd, &gr.ddt_bias, &gr.ddt_bias64);
        if (a.z) add_grad(g, "dz", 3, sx, &gr.dz, &gr.dz64);
        if (a.h0) add_grad(g, "dh0", 3, sh, &gr.dh0, &gr.dh064);
        st = lattn_ssm_ref_backward(ctx, &a, &gr);
    }
    return report(c, ctx, st);
}

/* A gradient case of a layer: in.x and in.dout (random normal), then out.dx and, for every tensor of
   the layer (its arena and tensor list), out.d<name> and out64.d<name> from run (the layer's
   backward_ref on fresh sequences); float32 forms within 1e-4. */
typedef lattn_status (*grad_fn)(lattn_ctx *ctx, const void *layer, int64_t B, int64_t T, const float *x, const float *dy, float *grad,
                                double *grad64, float *dx);
static lattn_status grad_case(gout *g, lattn_rng *rng, lattn_ctx *ctx, const void *layer, int64_t B, int64_t T, int64_t D, const float *arena,
                              size_t n_params, const lattn_tensor *tensors, int64_t n_tensors, grad_fn run) {
    float *x = rand_f(g, rng, (size_t)(B * T * D), 1, 0, 0), *dy = rand_f(g, rng, (size_t)(B * T * D), 1, 0, 0);
    float *gf = (float *)keep(g, n_params * 4), *dx = (float *)keep(g, (size_t)(B * T * D) * 4);
    double *gd = (double *)keep(g, n_params * 8);
    int64_t sx[3], i;
    lattn_status st;
    sx[0] = B; sx[1] = T; sx[2] = D;
    meta(g, "pass", "backward");
    meta(g, "tol_fp32", "1e-4");   /* a bias's or a gate's gradient sums over every token, with cancellation */
    add(g, "in.x", LATTN_DTYPE_F32, 3, sx, x); add(g, "in.dout", LATTN_DTYPE_F32, 3, sx, dy);
    add(g, "out.dx", LATTN_DTYPE_F32, 3, sx, dx);
    st = run(ctx, layer, B, T, x, dy, gf, gd, dx);
    for (i = 0; i < n_tensors; i++) {
        const size_t off = (size_t)(tensors[i].data - arena);
        char nm[80];
        snprintf(nm, sizeof nm, "out.d%s", tensors[i].name); add(g, nm, LATTN_DTYPE_F32, tensors[i].ndim, tensors[i].shape, gf + off);
        snprintf(nm, sizeof nm, "out64.d%s", tensors[i].name); add(g, nm, LATTN_DTYPE_F64, tensors[i].ndim, tensors[i].shape, gd + off);
    }
    return st;
}
static lattn_status gdn_grad(lattn_ctx *ctx, const void *l, int64_t B, int64_t T, const float *x, const float *dy, float *gr, double *g64, float *dx) {
    return lattn_gdn_backward_ref(ctx, (const lattn_gdn_layer *)l, B, T, x, NULL, dy, gr, g64, dx, NULL);
}
static lattn_status p1_grad(lattn_ctx *ctx, const void *l, int64_t B, int64_t T, const float *x, const float *dy, float *gr, double *g64, float *dx) {
    return lattn_prism_p1_backward_ref(ctx, (const lattn_prism_p1 *)l, B, T, x, dy, gr, g64, dx);
}
static lattn_status p2_grad(lattn_ctx *ctx, const void *l, int64_t B, int64_t T, const float *x, const float *dy, float *gr, double *g64, float *dx) {
    return lattn_prism_p2_backward_ref(ctx, (const lattn_prism_p1 *)l, B, T, x, NULL, dy, gr, g64, dx, NULL);
}
static lattn_status laplace_grad(lattn_ctx *ctx, const void *l, int64_t B, int64_t T, const float *x, const float *dy, float *gr, double *g64,
                                 float *dx) {
    return lattn_laplace_backward_ref(ctx, (const lattn_laplace_model *)l, B, T, NULL, x, dy, NULL, gr, g64, dx);
}
static lattn_status p0_grad(lattn_ctx *ctx, const void *l, int64_t B, int64_t T, const float *x, const float *dy, float *gr, double *g64, float *dx) {
    return lattn_prism_p0_backward_ref(ctx, (const lattn_prism_p0 *)l, B, T, x, NULL, dy, gr, g64, dx, NULL);
}
static lattn_status ttt_grad(lattn_ctx *ctx, const void *l, int64_t B, int64_t T, const float *x, const float *dy, float *gr, double *g64, float *dx) {
    return lattn_ttt_layer_backward_ref(ctx, (const lattn_ttt_layer *)l, B, T, x, NULL, dy, gr, g64, dx, NULL);
}

static int build_laplace_layer(const gcase *c, gout *g, lattn_ctx *ctx, lattn_rng *rng) {
    const int64_t B = c->B, T = c->T;
    lattn_status st = LATTN_OK;
    /* weights drawn so that every path carries O(1) signal: matrices N(0, 1/fan_in), norm
       weights U(0.5, 1.5), biases U(-0.5, 0.5), conv U(-0.5, 0.5); tensors in arena order */
    lattn_laplace_config lc = lattn_laplace_config_small();
    lattn_laplace_model m;
    int64_t D = c->chunk, SF, i;
    layer_io io;
    lc.n_layers = 1; lc.D = D; lc.H = c->H; lc.K = c->K; lc.V = c->V; lc.ffn = 5 * D / 3; lc.conv_w = c->W; lc.vocab = 0;
    if (lattn_laplace_init(ctx, &m, &lc, c->seed) != LATTN_OK) return 0;
    SF = lattn__laplace_state_floats(&lc);
    meta(g, "layout", "x, y: [B][T][D]; state0, state: [B][state floats] (per layer: conv cache [D][W], GLA states [H][K][V]); weights as in lattn.h >>laplace, prefixed in.");
    meta(g, "laplace.n_layers", num(g, 1)); meta(g, "laplace.D", num(g, (double)D)); meta(g, "laplace.H", num(g, (double)lc.H));
    meta(g, "laplace.K", num(g, (double)lc.K)); meta(g, "laplace.V", num(g, (double)lc.V)); meta(g, "laplace.ffn", num(g, (double)lc.ffn));
    meta(g, "laplace.conv_w", num(g, (double)lc.conv_w)); meta(g, "laplace.vocab", "0");
    meta(g, "laplace.gate_mode", "rmsnorm_swish"); meta(g, "laplace.norm_eps", "9.99999975e-06");
    for (i = 0; i < m.n_tensors; i++) {
        lattn_tensor *t = &m.tensors[i];
        float *w;
        const char *last = strrchr(t->name, '.');
        if (t->ndim == 2 && !strstr(t->name, "conv")) w = rand_f(g, rng, t->count, 1, 0, 0);
        else w = rand_f(g, rng, t->count, 0, strcmp(last, ".bias") == 0 || t->ndim == 2 ? -0.5f : 0.5f,
                        strcmp(last, ".bias") == 0 || t->ndim == 2 ? 0.5f : 1.5f);
        if (t->ndim == 2 && !strstr(t->name, "conv")) {
            size_t j;
            for (j = 0; j < t->count; j++) w[j] = (float)(w[j] / sqrt((double)t->shape[1]));
        }
        memcpy(t->data, w, t->count * sizeof(float));
        add_weight(g, t, w);
    }
    if (strstr(c->id, "_grad")) st = grad_case(g, rng, ctx, &m, B, T, D, m.arena, m.n_params, m.tensors, m.n_tensors, laplace_grad);
    else {
        layer_inputs(g, rng, B, T, D, SF, 1.0f, &io);
        st = lattn_laplace_forward_ref(ctx, &m, B, T, NULL, io.x, io.y, io.s, NULL);
        layer_outputs(g, &io);
    }
    lattn_laplace_free(ctx, &m);
    return report(c, ctx, st);
}

static int build_gdr(const gcase *c, gout *g, lattn_ctx *ctx, lattn_rng *rng) {
    const int64_t B = c->B, T = c->T;
    const int64_t n = nseq(c);
    lattn_status st = LATTN_OK;
    lattn_gdr_args a = {0};
    int64_t H = c->H, K = c->K, V = c->V, L = c->W, sq[4], sv[4], ss[4], sh[3], sl[4], i;
    size_t nh = (size_t)(B * T * H);
    sq[0] = B; sq[1] = T; sq[2] = H; sq[3] = K; sv[0] = B; sv[1] = T; sv[2] = H; sv[3] = V;
    ss[0] = n; ss[1] = H; ss[2] = K; ss[3] = V; sh[0] = B; sh[1] = T; sh[2] = H;
    meta(g, "layout", "q, k, e, gk: [B][T][H][K]; v, o: [B][T][H][V]; beta, g, c: [B][T][H]; inj_b [B][T][H][L], inj_kap [..][L][K], inj_d [..][L][V]; h0, ht: [N][H][K][V] (o = s S^T q)");
    meta(g, "l2norm", "1");
    if (c->chunk) meta(g, "chunk", num(g, (double)c->chunk));
    meta(g, "scale", num(g, 1.0 / sqrt((double)K)));
    a.B = B; a.T = T; a.H = H; a.K = K; a.V = V; a.l2norm = 1; a.scale = 1.0 / sqrt((double)K);
    a.q = rand_f(g, rng, (size_t)(B * T * H * K), 1, 0, 0); add(g, "in.q", LATTN_DTYPE_F32, 4, sq, a.q);
    a.k = rand_f(g, rng, (size_t)(B * T * H * K), 1, 0, 0); add(g, "in.k", LATTN_DTYPE_F32, 4, sq, a.k);
    a.v = rand_f(g, rng, (size_t)(B * T * H * V), 1, 0, 0); add(g, "in.v", LATTN_DTYPE_F32, 4, sv, a.v);
    a.beta = rand_f(g, rng, nh, 0, 0.0f, 1.0f); add(g, "in.beta", LATTN_DTYPE_F32, 3, sh, a.beta);
    if (c->bias) {                   /* logsigmoid(x)/4, x ~ N(0,1) */
        size_t ng = nh * (size_t)(c->bias == 2 ? K : 1), j;
        float *gt = rand_f(g, rng, ng, 1, 0, 0);
        for (j = 0; j < ng; j++) { double x = gt[j]; gt[j] = (float)(((x < 0 ? x : 0.0) - log1p(exp(-fabs(x)))) / 4.0); }
        if (c->bias == 2) { a.gk = gt; add(g, "in.gk", LATTN_DTYPE_F32, 4, sq, gt); }
        else { a.g = gt; add(g, "in.g", LATTN_DTYPE_F32, 3, sh, gt); }
    }
    if (L > 0) {
        float *kap, *d;
        a.e = rand_f(g, rng, (size_t)(B * T * H * K), 1, 0, 0); add(g, "in.e", LATTN_DTYPE_F32, 4, sq, a.e);
        a.c = rand_f(g, rng, nh, 0, -1.0f, 1.0f); add(g, "in.c", LATTN_DTYPE_F32, 3, sh, a.c);
        a.L = L; sl[0] = B; sl[1] = T; sl[2] = H; sl[3] = L;
        a.inj_b = rand_f(g, rng, nh * (size_t)L, 0, -1.0f, 1.0f); add(g, "in.inj_b", LATTN_DTYPE_F32, 4, sl, a.inj_b);
        kap = rand_f(g, rng, nh * (size_t)(L * K), 0, -0.3f, 0.3f); d = rand_f(g, rng, nh * (size_t)(L * V), 1, 0, 0);
        {
            int64_t s5[5];
            s5[0] = B; s5[1] = T; s5[2] = H; s5[3] = L; s5[4] = K; add(g, "in.inj_kap", LATTN_DTYPE_F32, 5, s5, kap);
            s5[4] = V; add(g, "in.inj_d", LATTN_DTYPE_F32, 5, s5, d);
        }
        a.inj_kap = kap; a.inj_d = d;
    }
    if (c->h0) { a.h0 = rand_f(g, rng, (size_t)(n * H * K * V), 1, 0, 0); add(g, "in.h0", LATTN_DTYPE_F32, 4, ss, a.h0); }
    if (c->n_seqs) { a.offsets = c->offsets; a.n_seqs = c->n_seqs; }
    {
        float *o = (float *)keep(g, (size_t)(B * T * H * V) * 4), *ht = (float *)keep(g, (size_t)(n * H * K * V) * 4);
        double *o64 = (double *)keep(g, (size_t)(B * T * H * V) * 8), *ht64 = (double *)keep(g, (size_t)(n * H * K * V) * 8);
        a.o = o; a.ht = ht; a.o64 = o64; a.ht64 = ht64;
        st = lattn_gdr_ref(ctx, &a);
        if (!strstr(c->id, "_grad")) {   /* a gradient case holds the gradients only */
            add(g, "out.o", LATTN_DTYPE_F32, 4, sv, o); add(g, "out.ht", LATTN_DTYPE_F32, 4, ss, ht);
            if (B * T * H * V <= 20000) { add(g, "out64.o", LATTN_DTYPE_F64, 4, sv, o64); add(g, "out64.ht", LATTN_DTYPE_F64, 4, ss, ht64); }
        }
    }
    if (st == LATTN_OK && strstr(c->id, "_grad")) {
        lattn_gdr_grads gr = {0};
        int64_t s5[5];
        s5[0] = B; s5[1] = T; s5[2] = H; s5[3] = L; s5[4] = K;
        meta(g, "pass", "backward");
        gr.dout = rand_f(g, rng, (size_t)(B * T * H * V), 1, 0, 0); add(g, "in.dout", LATTN_DTYPE_F32, 4, sv, gr.dout);
        gr.dht = rand_f(g, rng, (size_t)(n * H * K * V), 1, 0, 0); add(g, "in.dht", LATTN_DTYPE_F32, 4, ss, gr.dht);
        add_grad(g, "dq", 4, sq, &gr.dq, &gr.dq64);
        add_grad(g, "dk", 4, sq, &gr.dk, &gr.dk64);
        add_grad(g, "dv", 4, sv, &gr.dv, &gr.dv64);
        add_grad(g, "dbeta", 3, sh, &gr.dbeta, &gr.dbeta64);
        if (a.g) add_grad(g, "dg", 3, sh, &gr.dg, &gr.dg64);
        if (a.gk) add_grad(g, "dgk", 4, sq, &gr.dgk, &gr.dgk64);
        if (a.e) add_grad(g, "de", 4, sq, &gr.de, &gr.de64);
        if (a.c) add_grad(g, "dc", 3, sh, &gr.dc, &gr.dc64);
        if (L > 0) {
            add_grad(g, "dinj_b", 4, sl, &gr.dinj_b, &gr.dinj_b64);
            add_grad(g, "dinj_kap", 5, s5, &gr.dinj_kap, &gr.dinj_kap64);
            s5[4] = V;
            add_grad(g, "dinj_d", 5, s5, &gr.dinj_d, &gr.dinj_d64);
        }
        if (a.h0) add_grad(g, "dh0", 4, ss, &gr.dh0, &gr.dh064);
        st = lattn_gdr_ref_backward(ctx, &a, &gr);
    }
    (void)i;
    return report(c, ctx, st);
}

static int build_gdn_layer(const gcase *c, gout *g, lattn_ctx *ctx, lattn_rng *rng) {
    const int64_t B = c->B, T = c->T;
    lattn_status st = LATTN_OK;
    /* fla's A_log and dt_bias; matrices N(0, 1/fan_in), conv U(-0.5, 0.5), o_norm U(0.5, 1.5) */
    lattn_gdn_config lc = lattn_gdn_config_default();
    lattn_gdn_layer m;
    int64_t D = c->chunk, SF, i;
    layer_io io;
    lc.D = D; lc.H = c->H; lc.K = c->K; lc.V = c->V; lc.conv_w = c->W;
    if (lattn_gdn_init(ctx, &m, &lc, c->seed) != LATTN_OK) return 0;
    SF = lattn__gdn_state_floats(&lc);
    meta(g, "layout", "x, y: [B][T][D]; state0, state: [B][state floats] (q, k, v conv caches [H*K][W], [H*K][W], [H*V][W], then S [H][K][V]); weights as in lattn.h >>gdnlayer, prefixed in.");
    meta(g, "gdn.D", num(g, (double)D)); meta(g, "gdn.H", num(g, (double)lc.H)); meta(g, "gdn.K", num(g, (double)lc.K));
    meta(g, "gdn.V", num(g, (double)lc.V)); meta(g, "gdn.conv_w", num(g, (double)lc.conv_w));
    meta(g, "gdn.allow_neg_eigval", "0"); meta(g, "gdn.norm_eps", "9.99999975e-06");
    for (i = 0; i < m.n_tensors; i++) {
        lattn_tensor *t = &m.tensors[i];
        float *w = (float *)keep(g, t->count * 4);
        size_t j;
        if (t->ndim == 2 && !strstr(t->name, "conv")) {
            lattn_rng_fill_normal(rng, w, t->count, 0.0f, 1.0f);
            for (j = 0; j < t->count; j++) w[j] = (float)(w[j] / sqrt((double)t->shape[1]));
        } else if (t->ndim == 2) lattn_rng_fill_uniform(rng, w, t->count, -0.5f, 0.5f);
        else if (strcmp(t->name, "o_norm.weight") == 0) lattn_rng_fill_uniform(rng, w, t->count, 0.5f, 1.5f);
        else memcpy(w, t->data, t->count * 4);
        memcpy(t->data, w, t->count * 4);
        add_weight(g, t, w);
    }
    if (strstr(c->id, "_grad")) st = grad_case(g, rng, ctx, &m, B, T, D, m.arena, m.n_params, m.tensors, m.n_tensors, gdn_grad);
    else {
        layer_inputs(g, rng, B, T, D, SF, 1.0f, &io);
        st = lattn_gdn_forward_ref(ctx, &m, B, T, io.x, io.y, io.s, NULL);
        layer_outputs(g, &io);
    }
    lattn_gdn_free(ctx, &m);
    return report(c, ctx, st);
}

static int build_attention(const gcase *c, gout *g, lattn_ctx *ctx, lattn_rng *rng) {
    const int64_t B = c->B, T = c->T;
    lattn_status st = LATTN_OK;
    lattn_attn_args a = {0};
    int64_t H = c->H, Hk = c->bias, K = c->K, V = c->V, sq[4], sk[4], sv[4], so[4], sl[3];
    double *o64, *l64;
    float *o, *lse;
    sq[0] = sk[0] = sv[0] = so[0] = B; sq[1] = sk[1] = sv[1] = so[1] = T; sq[2] = so[2] = H; sk[2] = sv[2] = Hk;
    sq[3] = sk[3] = K; sv[3] = so[3] = V; sl[0] = B; sl[1] = T; sl[2] = H;
    meta(g, "layout", "q: [B][T][H][K]; k: [B][T][H_kv][K]; v: [B][T][H_kv][V]; o: [B][T][H][V]; lse: [B][T][H] (natural log of the softmax normaliser, scores scaled); query head h reads KV head h / (H / H_kv)");
    meta(g, "mask", c->norm ? "window" : "causal");
    if (c->norm) meta(g, "window", num(g, (double)c->W));
    meta(g, "chunk", num(g, (double)c->chunk));
    a.B = B; a.T = T; a.H = H; a.H_kv = Hk; a.K = K; a.V = V;
    if (c->norm) { a.mask = LATTN_MASK_WINDOW; a.window = c->W; }
    a.q = rand_f(g, rng, (size_t)(B * T * H * K), 1, 0, 0); add(g, "in.q", LATTN_DTYPE_F32, 4, sq, a.q);
    a.k = rand_f(g, rng, (size_t)(B * T * Hk * K), 1, 0, 0); add(g, "in.k", LATTN_DTYPE_F32, 4, sk, a.k);
    a.v = rand_f(g, rng, (size_t)(B * T * Hk * V), 1, 0, 0); add(g, "in.v", LATTN_DTYPE_F32, 4, sv, a.v);
    if (c->n_seqs) { a.offsets = c->offsets; a.n_seqs = c->n_seqs; }
    o = (float *)keep(g, (size_t)(B * T * H * V) * 4); lse = (float *)keep(g, (size_t)(B * T * H) * 4);
    o64 = (double *)keep(g, (size_t)(B * T * H * V) * 8); l64 = (double *)keep(g, (size_t)(B * T * H) * 8);
    a.o = o; a.lse = lse; a.o64 = o64; a.lse64 = l64;
    st = lattn_attn_ref(ctx, &a);
    add(g, "out.o", LATTN_DTYPE_F32, 4, so, o); add(g, "out.lse", LATTN_DTYPE_F32, 3, sl, lse);
    add(g, "out64.lse", LATTN_DTYPE_F64, 3, sl, l64);
    return report(c, ctx, st);
}

static int build_transformer(const gcase *c, gout *g, lattn_ctx *ctx, lattn_rng *rng) {
    const int64_t B = c->B, T = c->T;
    lattn_status st = LATTN_OK;
    /* weights: matrices N(0, 1/fan_in), embedding N(0, 1), norm gains U(0.5, 1.5), so that the
       attention is far from uniform; tokens uniform over the vocabulary (sps: below 253, with
       EOS at tokens 6 and 17 of the first sequence and 11 of the second; the second starts with three
       left pads, each a document of its own as in the official code) */
    lattn_tf_config tc = lattn_tf_config_small();
    lattn_tf_model m;
    lattn_sps_config sc = lattn_sps_config_default((lattn_sps_variant)c->H);
    int sps = strcmp(c->mixer, "sps") == 0;
    int64_t i, st2[2], s3[3], s1[1];
    int32_t *tok;
    float *lg, *loss;
    double l64;
    if (lattn_tf_init(ctx, &m, &tc, c->seed) != LATTN_OK) return 0;
    meta(g, "layout", sps ? "tokens: I32 [B][T]; logits: [B][T][vocab] of each token's readout slot; loss: [1], the mean next-token cross-entropy over the readouts of tokens that are neither EOS nor pad; weights as in lattn.h >>transformer, prefixed in., configuration as tf.*, the SPS variant as sps.*"
                          : "tokens: I32 [B][T]; logits: [B][T][vocab]; loss: [1], the mean next-token cross-entropy over B*(T-1) predictions; weights as in lattn.h >>transformer, prefixed in., configuration as tf.*");
    meta(g, "tf.n_layers", num(g, (double)tc.n_layers));
    meta(g, "tf.D", num(g, (double)tc.D));
    meta(g, "tf.H", num(g, (double)tc.H));
    meta(g, "tf.H_kv", num(g, (double)tc.H_kv));
    meta(g, "tf.K", num(g, (double)tc.K));
    meta(g, "tf.ffn", num(g, (double)tc.ffn));
    meta(g, "tf.vocab", num(g, (double)tc.vocab));
    meta(g, "tf.window", "-1"); meta(g, "tf.rope_theta", "10000"); meta(g, "tf.norm_eps", "9.99999997e-07");
    if (sps) {
        sc.w = c->W; sc.predict_id = 255; sc.eos_id = 254; sc.pad_id = 253;
        meta(g, "sps.variant", lattn_sps_variant_name(sc.variant)); meta(g, "sps.w", num(g, (double)sc.w));
        meta(g, "sps.predict_id", "255"); meta(g, "sps.eos_id", "254"); meta(g, "sps.pad_id", "253");
    }
    for (i = 0; i < m.n_tensors; i++) {
        lattn_tensor *t = &m.tensors[i];
        float *w = (float *)keep(g, t->count * 4);
        size_t j;
        if (t->ndim == 2) {
            lattn_rng_fill_normal(rng, w, t->count, 0.0f, 1.0f);
            if (strcmp(t->name, "wte.weight") != 0)
                for (j = 0; j < t->count; j++) w[j] = (float)(w[j] / sqrt((double)t->shape[1]));
        } else lattn_rng_fill_uniform(rng, w, t->count, 0.5f, 1.5f);
        memcpy(t->data, w, t->count * 4);
        add_weight(g, t, w);
    }
    tok = (int32_t *)keep(g, (size_t)(B * T) * 4);
    for (i = 0; i < B * T; i++) tok[i] = (int32_t)(lattn_rng_next(rng) % (uint64_t)(sps ? 253 : tc.vocab));
    if (sps) { tok[6] = 254; tok[17] = 254; tok[T + 11] = 254; tok[T] = tok[T + 1] = tok[T + 2] = 253; }
    st2[0] = B; st2[1] = T; s3[0] = B; s3[1] = T; s3[2] = tc.vocab; s1[0] = 1;
    add(g, "in.tokens", LATTN_DTYPE_I32, 2, st2, tok);
    loss = (float *)keep(g, 4);
    if (strstr(c->id, "_grad")) {   /* the loss's gradient of every weight: out.d<name>, out64.d<name> */
        float *gf = (float *)keep(g, m.n_params * 4);
        double *gd = (double *)keep(g, m.n_params * 8);
        meta(g, "pass", "backward");
        st = sps ? lattn_sps_backward_ref(ctx, &m, &sc, B, T, tok, NULL, &l64, gf, gd, NULL)
                 : lattn_tf_backward_ref(ctx, &m, B, T, tok, NULL, NULL, &l64, gf, gd, NULL);
        for (i = 0; i < m.n_tensors; i++) {
            const size_t off = (size_t)(m.tensors[i].data - m.arena);
            char nm[80];
            snprintf(nm, sizeof nm, "out.d%s", m.tensors[i].name); add(g, nm, LATTN_DTYPE_F32, m.tensors[i].ndim, m.tensors[i].shape, gf + off);
            snprintf(nm, sizeof nm, "out64.d%s", m.tensors[i].name); add(g, nm, LATTN_DTYPE_F64, m.tensors[i].ndim, m.tensors[i].shape, gd + off);
        }
    } else {
        lg = (float *)keep(g, (size_t)(B * T * tc.vocab) * 4);
        st = sps ? lattn_sps_forward_ref(ctx, &m, &sc, B, T, tok, lg, &l64, NULL) : lattn_tf_forward_ref(ctx, &m, B, T, tok, NULL, lg, &l64, NULL);
        add(g, "out.logits", LATTN_DTYPE_F32, 3, s3, lg);
    }
    loss[0] = (float)l64;
    add(g, "out.loss", LATTN_DTYPE_F32, 1, s1, loss);
    {
        double *l = (double *)keep(g, 8);
        l[0] = l64; add(g, "out64.loss", LATTN_DTYPE_F64, 1, s1, l);
    }
    lattn_tf_free(ctx, &m);
    return report(c, ctx, st);
}

static int build_prism(const gcase *c, gout *g, lattn_ctx *ctx, lattn_rng *rng) {
    const int64_t B = c->B, T = c->T;
    lattn_status st = LATTN_OK;
    /* the official tensor names and shapes; weights N(0,1)/sqrt(fan_in), biases N(0, 0.3²),
       LayerNorm weights 1 + N(0, 0.3²), solver up-projections N(0,1)/sqrt(R) */
    static const char *const nm[23] = { "_fused_proj.weight", "_fused_proj.bias", "short_conv.weight", "short_conv.bias",
        "anchor_norm.weight", "anchor_norm.bias", "layer_norm_input.weight", "layer_norm_input.bias", "layer_norm_output.weight",
        "layer_norm_output.bias", "_gate.0.weight", "_gate.0.bias", "_gate.1.weight", "_gate.1.bias", "_g.weight", "_g.bias",
        "b_proj.weight", "_o.0.weight", "_o.0.bias", "_o.2.weight", "_o.2.bias", "solver_up_gain_weight", "solver_up_k_weight" };
    const int64_t D = c->K, H = c->H, S = c->W, R = 128, Kc = 5, rg = 8, F = 4 * D + 2 * R * S + H * S;
    int64_t sh[23][3] = { { F, D, 0 }, { F, 0, 0 }, { D, 1, Kc }, { D, 0, 0 }, { D, 0, 0 }, { D, 0, 0 }, { D, 0, 0 }, { D, 0, 0 },
                          { D, 0, 0 }, { D, 0, 0 }, { rg, D, 0 }, { rg, 0, 0 }, { D, rg, 0 }, { D, 0, 0 }, { D, D, 0 }, { D, 0, 0 },
                          { H, D, 0 }, { 4 * D, D, 0 }, { 4 * D, 0, 0 }, { D, 4 * D, 0 }, { D, 0, 0 }, { S, R, D }, { S, R, D } };
    int64_t sx[3], ss[2], i;
    char nmb[80];
    lattn_prism_p1 p;
    lattn_st_file pf;
    lattn_st_entry pe[23];
    unsigned char *pbuf;
    size_t pn;
    int is_p2 = strcmp(c->mixer, "prism_p2") == 0;
    meta(g, "layout", "x, y: [B][T][D]; the PRISMBlock state_dict under its official names and torch shapes, prefixed in. (see lattn.h >>prism)");
    meta(g, "chunk", num(g, (double)c->chunk));
    for (i = 0; i < 23; i++) {
        size_t cnt = (size_t)(sh[i][0] * (sh[i][1] ? sh[i][1] : 1) * (sh[i][2] ? sh[i][2] : 1)), j;
        int nd = sh[i][2] ? 3 : sh[i][1] ? 2 : 1;
        float *w = rand_f(g, rng, cnt, 1, 0, 0);
        double fan = i >= 21 ? (double)R : i == 2 ? (double)Kc : nd >= 2 ? (double)sh[i][nd - 1] : 1.0;
        int is_ln = strstr(nm[i], "norm") && strstr(nm[i], ".weight");
        for (j = 0; j < cnt; j++)
            w[j] = is_ln ? 1.0f + 0.3f * w[j] : nd == 1 ? 0.3f * w[j] : (float)(w[j] / sqrt(fan));
        snprintf(nmb, sizeof nmb, "in.%s", nm[i]);
        add(g, nmb, LATTN_DTYPE_F32, nd, sh[i], w);
        pe[i] = g->e[g->n - 1];
    }
    /* the block through the library's own loader: the same file a backend would read */
    if (lattn_st_serialize(ctx, pe, 23, NULL, 0, &pbuf, &pn) != LATTN_OK || lattn_st_parse(ctx, pbuf, pn, &pf) != LATTN_OK ||
        lattn_prism_p1_init_st(ctx, &p, &pf, "in.") != LATTN_OK) return 0;
    p.C = c->chunk;
    sx[0] = B; sx[1] = T; sx[2] = D;
    if (strstr(c->id, "_grad")) st = grad_case(g, rng, ctx, &p, B, T, D, p.arena, p.n_params, p.tensors, p.n_tensors, is_p2 ? p2_grad : p1_grad);
    else {
        float *x = rand_f(g, rng, (size_t)(B * T * D), 1, 0, 0), *y = (float *)keep(g, (size_t)(B * T * D) * 4);
        add(g, "in.x", LATTN_DTYPE_F32, 3, sx, x);
        if (is_p2) {
            int64_t SF = lattn__prism_p2_state_floats(&p);
            float *s0 = rand_f(g, rng, (size_t)(B * SF), 1, 0, 0), *s1 = (float *)keep(g, (size_t)(B * SF) * 4);
            size_t j;
            for (j = 0; j < (size_t)(B * SF); j++) s0[j] *= 0.3f;
            ss[0] = B; ss[1] = SF;
            add(g, "in.state0", LATTN_DTYPE_F32, 2, ss, s0);
            memcpy(s1, s0, (size_t)(B * SF) * 4);
            st = lattn_prism_p2_forward_ref(ctx, &p, B, T, x, y, s1, NULL);
            add(g, "out.y", LATTN_DTYPE_F32, 3, sx, y); add(g, "out.state", LATTN_DTYPE_F32, 2, ss, s1);
        } else {
            st = lattn_prism_p1_forward_ref(ctx, &p, B, T, x, y, NULL);
            add(g, "out.y", LATTN_DTYPE_F32, 3, sx, y);
        }
    }
    lattn_prism_p1_free(ctx, &p); lattn_st_free(ctx, &pf); lattn_free(ctx, pbuf);
    return report(c, ctx, st);
}

static int build_ttt_layer(const gcase *c, gout *g, lattn_ctx *ctx, lattn_rng *rng) {
    const int64_t B = c->B, T = c->T;
    lattn_status st = LATTN_OK;
    /* the official names and shapes (lattn_ttt_layer_serialize); weights of a trained scale:
       matrices N(0,1)/sqrt(fan_in), biases N(0, 0.3²), norm weights 1 + N(0, 0.3²), the lr weight
       N(0, 0.3²/D), the lr bias 1 + N(0, 0.5²), token_idx N(0, 0.3²)/(i+1); state0: fresh, and for
       the second sequence (b > 1) position 5 with an accumulated gradient N(0, 0.05²) */
    lattn_ttt_config tc = lattn_ttt_config_default();
    lattn_ttt_layer m;
    lattn_st_file tf;
    unsigned char *tb;
    size_t tn, j;
    int64_t SF, P, i, h;
    layer_io io;
    tc.D = c->K; tc.H = c->H; tc.mini_batch = c->W; tc.mlp = c->bias; tc.use_gate = c->norm;
    if (lattn_ttt_layer_init(ctx, &m, &tc, c->seed) != LATTN_OK || lattn_ttt_layer_serialize(ctx, &m, &tb, &tn) != LATTN_OK ||
        lattn_st_parse(ctx, tb, tn, &tf) != LATTN_OK) return 0;
    meta(g, "layout", "x, y: [B][T][D]; state0, state: [B][state floats] (per head the fast weights at the open mini-batch's start, then the accumulated gradient; then the position in the mini-batch); the TTT layer's tensors under their official names and shapes, prefixed in. (lattn.h >>ttt)");
    meta(g, "ttt.base_lr", "1"); meta(g, "ttt.rope_theta", "10000");
    for (i = 0; i < tf.n_tensors; i++) {
        const lattn_st_tensor *t = &tf.tensors[i];
        const char *nm = t->name;
        float *w = rand_f(g, rng, t->count, 1, 0, 0);
        char nmb[80];
        int vec = t->ndim == 1 || strstr(nm, "bias") || strcmp(nm, "b1") == 0 || strcmp(nm, "b2") == 0;
        double fan = (double)t->shape[t->ndim - 1];
        if (strcmp(nm, "W1") == 0 || strcmp(nm, "W2") == 0) fan = (double)t->shape[1];
        for (j = 0; j < t->count; j++) {
            double z = w[j];
            w[j] = strcmp(nm, "learnable_token_idx") == 0 ? (float)(0.3 * z / (double)(j + 1))
                 : strcmp(nm, "learnable_ttt_lr_bias") == 0 ? (float)(1.0 + 0.5 * z)
                 : strcmp(nm, "learnable_ttt_lr_weight") == 0 ? (float)(0.3 * z / sqrt((double)tc.D))
                 : strstr(nm, "norm") && strstr(nm, "weight") ? (float)(1.0 + 0.3 * z)
                 : vec ? (float)(0.3 * z) : (float)(z / sqrt(fan));
        }
        snprintf(nmb, sizeof nmb, "in.%s", nm);
        add(g, nmb, LATTN_DTYPE_F32, t->ndim, t->shape, w);
    }
    lattn_st_free(ctx, &tf); lattn_free(ctx, tb); lattn_ttt_layer_free(ctx, &m);
    {   /* the layer as a backend reads it: from this case's own tensors */
        lattn_st_entry te[24];
        int ne = 0, k;
        for (k = 0; k < g->n; k++) if (strncmp(g->e[k].name, "in.", 3) == 0) te[ne++] = g->e[k];
        if (lattn_st_serialize(ctx, te, ne, g->meta, g->nm_meta, &tb, &tn) != LATTN_OK || lattn_st_parse(ctx, tb, tn, &tf) != LATTN_OK ||
            lattn_ttt_layer_init_st(ctx, &m, &tf, "in.") != LATTN_OK) return 0;
    }
    if (strstr(c->id, "_grad")) {   /* fresh sequences */
        st = grad_case(g, rng, ctx, &m, B, T, tc.D, m.arena, m.n_params, m.tensors, m.n_tensors, ttt_grad);
        lattn_ttt_layer_free(ctx, &m); lattn_st_free(ctx, &tf); lattn_free(ctx, tb);
        return report(c, ctx, st);
    }
    SF = lattn__ttt_state_floats(&tc); P = lattn__ttt_p(tc.D / tc.H, tc.mlp);
    layer_inputs(g, rng, B, T, tc.D, SF, 1.0f, &io);
    {
        float *s0 = (float *)g->e[g->n - 1].data;
        lattn_ttt_layer_state_init(&m, s0); lattn_ttt_layer_state_init(&m, s0 + SF);
        if (tc.mini_batch > 1) {
            for (h = 0; h < tc.H; h++) lattn_rng_fill_normal(rng, s0 + SF + h * 2 * P + P, (size_t)P, 0.0f, 0.05f);
            s0[2 * SF - 1] = 5.0f;
        }
        memcpy(io.s, s0, (size_t)(B * SF) * 4);
    }
    st = lattn_ttt_layer_forward_ref(ctx, &m, B, T, io.x, io.y, io.s, NULL);
    layer_outputs(g, &io);
    lattn_ttt_layer_free(ctx, &m); lattn_st_free(ctx, &tf); lattn_free(ctx, tb);
    return report(c, ctx, st);
}

static int build_prism_p0(const gcase *c, gout *g, lattn_ctx *ctx, lattn_rng *rng) {
    const int64_t B = c->B, T = c->T;
    lattn_status st = LATTN_OK;
    lattn_prism_p0_config pc;
    lattn_prism_p0 m;
    int64_t D = c->K, SF, i;
    layer_io io;
    pc.D = D; pc.H = c->H; pc.L = c->W; pc.Kc = 4;
    if (lattn_prism_p0_init(ctx, &m, &pc, c->seed) != LATTN_OK) return 0;
    SF = lattn__prism_p0_state_floats(&pc);
    meta(g, "layout", "x, y: [B][T][D]; state0, state: [B][state floats] (conv history [D][Kc], then [H][d][d]); weights as in lattn.h >>prism (P0), prefixed in.");
    meta(g, "p0.D", num(g, (double)D)); meta(g, "p0.H", num(g, (double)pc.H)); meta(g, "p0.L", num(g, (double)pc.L)); meta(g, "p0.Kc", "4");
    for (i = 0; i < m.n_tensors; i++) {   /* the library's init, perturbed so every path carries signal */
        lattn_tensor *t = &m.tensors[i];
        float *w = rand_f(g, rng, t->count, 1, 0, 0);
        size_t j;
        for (j = 0; j < t->count; j++) w[j] = t->data[j] + 0.1f * w[j];
        memcpy(t->data, w, t->count * 4);
        add_weight(g, t, w);
    }
    if (strstr(c->id, "_grad")) st = grad_case(g, rng, ctx, &m, B, T, D, m.arena, m.n_params, m.tensors, m.n_tensors, p0_grad);
    else {
        layer_inputs(g, rng, B, T, D, SF, 0.3f, &io);
        st = lattn_prism_p0_forward_ref(ctx, &m, B, T, io.x, io.y, io.s, NULL);
        layer_outputs(g, &io);
    }
    lattn_prism_p0_free(ctx, &m);
    return report(c, ctx, st);
}

static int build_s4d(const gcase *c, gout *g, lattn_ctx *ctx, lattn_rng *rng) {
    const int64_t B = c->B, T = c->T;
    lattn_status st = LATTN_OK;
    lattn_s4d_args a;
    int64_t D = c->K, N = c->V, sx[3], sp[2], sd[1], sh[4], i;
    float *p[6];
    static const char *const pn[6] = { "in.A_re", "in.A_im", "in.B_re", "in.B_im", "in.C_re", "in.C_im" };
    memset(&a, 0, sizeof a);
    sx[0] = B; sx[1] = T; sx[2] = D; sp[0] = D; sp[1] = N; sd[0] = D; sh[0] = B; sh[1] = D; sh[2] = N; sh[3] = 2;
    meta(g, "layout", "x, y: [B][T][D]; A_re (log of -Re A), A_im, B_re, B_im, C_re, C_im: [D][N]; log_dt, Dskip: [D]; h0, ht: [B][D][N][2] (re, im)");
    meta(g, "complex", c->norm ? "1" : "0");
    a.B = B; a.T = T; a.D = D; a.N = N; a.complex_modes = c->norm;
    for (i = 0; i < 6; i++) p[i] = (float *)keep(g, (size_t)(D * N) * 4);
    for (i = 0; i < D * N; i++) {    /* S4D-Lin: Re A = -1/2, Im A = pi n, B = 1, C ~ N(0, 1/2) */
        p[0][i] = logf(0.5f); p[1][i] = 3.14159265f * (float)(i % N); p[2][i] = 1.0f; p[3][i] = 0.0f;
        p[4][i] = (float)(0.70710678 * lattn_rng_normal_d(rng)); p[5][i] = (float)(0.70710678 * lattn_rng_normal_d(rng));
    }
    for (i = 0; i < 6; i++) if (c->norm || (i % 2 == 0)) add(g, pn[i], LATTN_DTYPE_F32, 2, sp, p[i]);
    a.A_re = p[0]; a.A_im = p[1]; a.B_re = p[2]; a.B_im = p[3]; a.C_re = p[4]; a.C_im = p[5];
    a.log_dt = rand_f(g, rng, (size_t)D, 0, logf(1e-3f), logf(1e-1f)); add(g, "in.log_dt", LATTN_DTYPE_F32, 1, sd, a.log_dt);
    a.Dskip = rand_f(g, rng, (size_t)D, 1, 0, 0); add(g, "in.Dskip", LATTN_DTYPE_F32, 1, sd, a.Dskip);
    if (c->h0) { a.h0 = rand_f(g, rng, (size_t)(B * D * N * 2), 1, 0, 0); add(g, "in.h0", LATTN_DTYPE_F32, 4, sh, a.h0); }
    a.x = rand_f(g, rng, (size_t)(B * T * D), 1, 0, 0); add(g, "in.x", LATTN_DTYPE_F32, 3, sx, a.x);
    a.y = (float *)keep(g, (size_t)(B * T * D) * 4);
    if (c->silu) a.ht = (float *)keep(g, (size_t)(B * D * N * 2) * 4);
    st = lattn_s4d_ref(ctx, &a);
    if (!strstr(c->id, "_grad")) {   /* a gradient case holds the gradients only */
        add(g, "out.y", LATTN_DTYPE_F32, 3, sx, a.y);
        if (c->silu) add(g, "out.ht", LATTN_DTYPE_F32, 4, sh, a.ht);
    }
    if (st == LATTN_OK && strstr(c->id, "_grad")) {
        static const char *const gn[6] = { "dA_re", "dA_im", "dB_re", "dB_im", "dC_re", "dC_im" };
        lattn_s4d_grads gr = {0};
        float **gf[6];
        double **gd[6];
        gf[0] = &gr.dA_re; gf[1] = &gr.dA_im; gf[2] = &gr.dB_re; gf[3] = &gr.dB_im; gf[4] = &gr.dC_re; gf[5] = &gr.dC_im;
        gd[0] = &gr.dA_re64; gd[1] = &gr.dA_im64; gd[2] = &gr.dB_re64; gd[3] = &gr.dB_im64; gd[4] = &gr.dC_re64; gd[5] = &gr.dC_im64;
        meta(g, "pass", "backward");
        gr.dout = rand_f(g, rng, (size_t)(B * T * D), 1, 0, 0); add(g, "in.dout", LATTN_DTYPE_F32, 3, sx, gr.dout);
        gr.dht = rand_f(g, rng, (size_t)(B * D * N * 2), 1, 0, 0); add(g, "in.dht", LATTN_DTYPE_F32, 4, sh, gr.dht);
        add_grad(g, "dx", 3, sx, &gr.dx, &gr.dx64);
        for (i = 0; i < 6; i++) if (c->norm || (i % 2 == 0)) add_grad(g, gn[i], 2, sp, gf[i], gd[i]);
        add_grad(g, "dlog_dt", 1, sd, &gr.dlog_dt, &gr.dlog_dt64);
        add_grad(g, "dDskip", 1, sd, &gr.dDskip, &gr.dDskip64);
        if (a.h0) add_grad(g, "dh0", 4, sh, &gr.dh0, &gr.dh064);
        st = lattn_s4d_ref_backward(ctx, &a, &gr);
    }
    return report(c, ctx, st);
}

/* A gradient case of the linear-attention family ("pass": "backward"): the upstream gradients
   in.dout, in.dht (and in.dzt when normalised) drawn after the forward inputs, and the gradient of
   every input from lattn_la_ref_backward as out.d<name> (out64.d<name>: every one is small). */
static int build_la_grads(const gcase *c, gout *g, lattn_ctx *ctx, lattn_rng *rng, lattn_la_args *a) {
    const int64_t n = nseq(c), B = a->B, T = a->T, H = a->H, K = a->K, V = a->V, Kf = lattn_fmap_width(a->fmap, K);
    const int64_t nw = a->fmap == LATTN_FMAP_HADAMARD ? 2 * K : a->fmap == LATTN_FMAP_HEDGEHOG ? K : 0;
    int64_t sq[4], sv[4], ss[4], sz[3], sg[3], sw[1], sb[1];
    lattn_la_grads gr = {0};
    float *f[8];
    double *d[8];
    int i;
    sq[0] = B; sq[1] = T; sq[2] = H; sq[3] = K; sv[0] = B; sv[1] = T; sv[2] = H; sv[3] = V;
    ss[0] = n; ss[1] = H; ss[2] = Kf; ss[3] = V; sz[0] = n; sz[1] = H; sz[2] = Kf; sg[0] = B; sg[1] = T; sg[2] = H;
    sw[0] = nw * K; sb[0] = nw;
    meta(g, "pass", "backward");
    gr.dout = rand_f(g, rng, (size_t)(B * T * H * V), 1, 0, 0);
    add(g, "in.dout", LATTN_DTYPE_F32, 4, sv, gr.dout);
    gr.dht = rand_f(g, rng, (size_t)(n * H * Kf * V), 1, 0, 0);
    add(g, "in.dht", LATTN_DTYPE_F32, 4, ss, gr.dht);
    if (a->normalize) {
        gr.dzt = rand_f(g, rng, (size_t)(n * H * Kf), 1, 0, 0);
        add(g, "in.dzt", LATTN_DTYPE_F32, 3, sz, gr.dzt);
    }
    {   /* dq, dk, dv, dgk, dg, dh0, dz0, dfmap_w; then dfmap_b */
        const size_t cnt[8] = { (size_t)(B * T * H * K), (size_t)(B * T * H * K), (size_t)(B * T * H * V), (size_t)(B * T * H * K),
                                (size_t)(B * T * H), (size_t)(n * H * Kf * V), (size_t)(n * H * Kf), (size_t)(nw * K) };
        for (i = 0; i < 8; i++) {
            f[i] = (float *)keep(g, (cnt[i] ? cnt[i] : 1) * 4);
            d[i] = (double *)keep(g, (cnt[i] ? cnt[i] : 1) * 8);
        }
    }
    gr.dq = f[0]; gr.dk = f[1]; gr.dv = f[2]; gr.dq64 = d[0]; gr.dk64 = d[1]; gr.dv64 = d[2];
    if (a->gk) { gr.dgk = f[3]; gr.dgk64 = d[3]; }
    if (a->g) { gr.dg = f[4]; gr.dg64 = d[4]; }
    if (a->h0) { gr.dh0 = f[5]; gr.dh064 = d[5]; }
    if (a->normalize && a->z0) { gr.dz0 = f[6]; gr.dz064 = d[6]; }
    if (nw) {
        gr.dfmap_w = f[7]; gr.dfmap_w64 = d[7];
        gr.dfmap_b = (float *)keep(g, (size_t)nw * 4); gr.dfmap_b64 = (double *)keep(g, (size_t)nw * 8);
    }
    if (lattn_la_ref_backward(ctx, a, &gr) != LATTN_OK) return 0;
    add(g, "out.dq", LATTN_DTYPE_F32, 4, sq, gr.dq); add(g, "out.dk", LATTN_DTYPE_F32, 4, sq, gr.dk);
    add(g, "out.dv", LATTN_DTYPE_F32, 4, sv, gr.dv);
    if (gr.dgk) add(g, "out.dgk", LATTN_DTYPE_F32, 4, sq, gr.dgk);
    if (gr.dg) add(g, "out.dg", LATTN_DTYPE_F32, 3, sg, gr.dg);
    if (gr.dh0) add(g, "out.dh0", LATTN_DTYPE_F32, 4, ss, gr.dh0);
    if (gr.dz0) add(g, "out.dz0", LATTN_DTYPE_F32, 3, sz, gr.dz0);
    if (nw) { add(g, "out.dfmap_w", LATTN_DTYPE_F32, 1, sw, gr.dfmap_w); add(g, "out.dfmap_b", LATTN_DTYPE_F32, 1, sb, gr.dfmap_b); }
    add(g, "out64.dq", LATTN_DTYPE_F64, 4, sq, gr.dq64); add(g, "out64.dk", LATTN_DTYPE_F64, 4, sq, gr.dk64);
    add(g, "out64.dv", LATTN_DTYPE_F64, 4, sv, gr.dv64);
    if (gr.dgk) add(g, "out64.dgk", LATTN_DTYPE_F64, 4, sq, gr.dgk64);
    if (gr.dg) add(g, "out64.dg", LATTN_DTYPE_F64, 3, sg, gr.dg64);
    if (gr.dh0) add(g, "out64.dh0", LATTN_DTYPE_F64, 4, ss, gr.dh064);
    return 1;
}

static int build_la(const gcase *c, gout *g, lattn_ctx *ctx, lattn_rng *rng) {
    const int64_t B = c->B, T = c->T;
    const int64_t n = nseq(c);
    lattn_status st = LATTN_OK;
    lattn_la_args a = {0};
    int64_t H = c->H, K = c->K, V = c->V, Kf, sq[4], sv[4], ss[4], sz[3], sw[1], sb[1];
    int big;
    int untied = strcmp(c->fmap, "hedgehog_untied") == 0;
    a.fmap = strcmp(c->fmap, "elu1") == 0 ? LATTN_FMAP_ELU1 : strcmp(c->fmap, "relu") == 0 ? LATTN_FMAP_RELU :
             strncmp(c->fmap, "hedgehog", 8) == 0 ? LATTN_FMAP_HEDGEHOG : LATTN_FMAP_IDENTITY;
    Kf = lattn_fmap_width(a.fmap, K);
    sq[0] = B; sq[1] = T; sq[2] = H; sq[3] = K; sv[0] = B; sv[1] = T; sv[2] = H; sv[3] = V;
    ss[0] = n; ss[1] = H; ss[2] = Kf; ss[3] = V; sz[0] = n; sz[1] = H; sz[2] = Kf;
    meta(g, "layout", "q, k: [B][T][H][K]; v, o: [B][T][H][V]; h0, ht: [N][H][K'][V] (o = s S^T phi(q)); z0, zt: [N][H][K']");
    meta(g, "fmap", untied ? "hedgehog" : c->fmap); meta(g, "normalize", c->norm ? "1" : "0");
    if (c->norm) meta(g, "eps", "1e-6");
    if (c->chunk) meta(g, "chunk", num(g, (double)c->chunk));
    meta(g, "scale", num(g, 1.0 / sqrt((double)Kf)));
    a.B = B; a.T = T; a.H = H; a.K = K; a.V = V; a.normalize = c->norm; a.scale = 1.0 / sqrt((double)Kf);
    a.q = rand_f(g, rng, (size_t)(B * T * H * K), 1, 0, 0); add(g, "in.q", LATTN_DTYPE_F32, 4, sq, a.q);
    a.k = rand_f(g, rng, (size_t)(B * T * H * K), 1, 0, 0); add(g, "in.k", LATTN_DTYPE_F32, 4, sq, a.k);
    a.v = rand_f(g, rng, (size_t)(B * T * H * V), 1, 0, 0); add(g, "in.v", LATTN_DTYPE_F32, 4, sv, a.v);
    if (c->h0) { a.h0 = rand_f(g, rng, (size_t)(n * H * Kf * V), 1, 0, 0); add(g, "in.h0", LATTN_DTYPE_F32, 4, ss, a.h0); }
    if (c->h0 && c->norm) { a.z0 = rand_f(g, rng, (size_t)(n * H * Kf), 0, 0.5f, 2.0f); add(g, "in.z0", LATTN_DTYPE_F32, 3, sz, a.z0); }
    if (a.fmap == LATTN_FMAP_HEDGEHOG) {
        sw[0] = K * K; sb[0] = K;
        a.fmap_w = rand_f(g, rng, (size_t)(K * K), 0, -0.3f, 0.3f); add(g, "in.fmap_w", LATTN_DTYPE_F32, 1, sw, a.fmap_w);
        a.fmap_b = rand_f(g, rng, (size_t)K, 0, -0.1f, 0.1f); add(g, "in.fmap_b", LATTN_DTYPE_F32, 1, sb, a.fmap_b);
        if (untied) {
            a.fmap_wk = rand_f(g, rng, (size_t)(K * K), 0, -0.3f, 0.3f); add(g, "in.fmap_wk", LATTN_DTYPE_F32, 1, sw, a.fmap_wk);
            a.fmap_bk = rand_f(g, rng, (size_t)K, 0, -0.1f, 0.1f); add(g, "in.fmap_bk", LATTN_DTYPE_F32, 1, sb, a.fmap_bk);
        }
    }
    if (strcmp(c->mixer, "retention") == 0 && c->W == 1) {   /* the decays in double, inside */
        a.retnet_decay = 1;
        meta(g, "retnet_decay", "1");
    } else if (strcmp(c->mixer, "retention") == 0) {    /* ln(1 - 2^(-5-h)) as float32 in.g_gamma */
        float *gg = (float *)keep(g, (size_t)H * 4);
        int64_t sgg[1];
        sgg[0] = H;
        lattn_retention_decay(H, gg); a.g_gamma = gg; add(g, "in.g_gamma", LATTN_DTYPE_F32, 1, sgg, gg);
    } else if (strcmp(c->mixer, "gla") == 0 || strcmp(c->mixer, "simple_gla") == 0) {
        int key = strcmp(c->mixer, "gla") == 0;     /* logsigmoid(x)/4, x ~ N(0,1) */
        size_t ng = (size_t)(B * T * H * (key ? K : 1)), i;
        float *gt = rand_f(g, rng, ng, 1, 0, 0);
        for (i = 0; i < ng; i++) {
            double x = gt[i];
            gt[i] = (float)(((x < 0 ? x : 0.0) - log1p(exp(-fabs(x)))) / 4.0);
        }
        if (key) { a.gk = gt; add(g, "in.gk", LATTN_DTYPE_F32, 4, sq, gt); }
        else { a.g = gt; add(g, "in.g", LATTN_DTYPE_F32, 3, sq, gt); }
    }
    if (c->n_seqs) { a.offsets = c->offsets; a.n_seqs = c->n_seqs; }
    if (strstr(c->id, "_grad")) return build_la_grads(c, g, ctx, rng, &a) && report(c, ctx, st);
    {
        float *o = (float *)keep(g, (size_t)(B * T * H * V) * 4), *ht = (float *)keep(g, (size_t)(n * H * Kf * V) * 4);
        float *zt = (float *)keep(g, (size_t)(n * H * Kf) * 4);
        double *o64 = (double *)keep(g, (size_t)(B * T * H * V) * 8), *ht64 = (double *)keep(g, (size_t)(n * H * Kf * V) * 8);
        double *zt64 = (double *)keep(g, (size_t)(n * H * Kf) * 8);
        a.o = o; a.ht = ht; a.zt = c->norm ? zt : NULL;
        a.o64 = o64; a.ht64 = ht64; a.zt64 = c->norm ? zt64 : NULL;
        st = lattn_la_ref(ctx, &a);
        add(g, "out.o", LATTN_DTYPE_F32, 4, sv, o); add(g, "out.ht", LATTN_DTYPE_F32, 4, ss, ht);
        if (c->norm) add(g, "out.zt", LATTN_DTYPE_F32, 3, sz, zt);
        big = B * T * H * V > 20000;          /* float64 copies where they are small */
        if (!big) {
            add(g, "out64.o", LATTN_DTYPE_F64, 4, sv, o64); add(g, "out64.ht", LATTN_DTYPE_F64, 4, ss, ht64);
            if (c->norm) add(g, "out64.zt", LATTN_DTYPE_F64, 3, sz, zt64);
        }
    }
    return report(c, ctx, st);
}

/* The builders by the case's "mixer" (the linear-attention family shares one). */
static const struct builder { const char *mixer; int (*build)(const gcase *, gout *, lattn_ctx *, lattn_rng *); } BUILDERS[] = {
    { "shortconv", build_shortconv },
    { "tcn", build_tcn },
    { "scan", build_scan },
    { "ssm", build_ssm },
    { "laplace_layer", build_laplace_layer },
    { "gdr", build_gdr },
    { "gdn_layer", build_gdn_layer },
    { "attention", build_attention },
    { "transformer", build_transformer },
    { "sps", build_transformer },
    { "prism_p1", build_prism },
    { "prism_p2", build_prism },
    { "ttt_layer", build_ttt_layer },
    { "prism_p0", build_prism_p0 },
    { "s4d", build_s4d },
    { "linear_attn", build_la },
    { "gla", build_la },
    { "simple_gla", build_la },
    { "retention", build_la },
};

static int build(const gcase *c, gout *g, lattn_ctx *ctx) {
    lattn_rng r = lattn_rng_seed(c->seed);
    size_t i;
    memset(g, 0, sizeof *g);
    meta(g, "mixer", c->mixer);
    meta(g, "seed", num(g, (double)c->seed));
    meta(g, "note", c->note);
    meta(g, "generator", "lattn reference_outputs/generate.c v" GEN_VERSION ", lattn " LATTN_VERSION_STRING);
    meta(g, "rng", "splitmix64; inputs drawn in the order they are stored (lattn.h >>rng)");
    meta(g, "tol_fp32", "1e-5"); meta(g, "tol_tf32", "5e-3"); meta(g, "tol_bf16", "2e-2");
    if (c->n_seqs) { int64_t s1[1]; s1[0] = c->n_seqs + 1; add(g, "in.offsets", LATTN_DTYPE_I64, 1, s1, c->offsets); }
    for (i = 0; i < sizeof BUILDERS / sizeof BUILDERS[0]; i++)
        if (strcmp(c->mixer, BUILDERS[i].mixer) == 0) return BUILDERS[i].build(c, g, ctx, &r);
    fprintf(stderr, "%s: no builder for mixer %s\n", c->id, c->mixer);
    return 0;
}
static void release(gout *g) { int i; for (i = 0; i < g->no; i++) free(g->own[i]); }

static unsigned char *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    unsigned char *b;
    long len;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END); len = ftell(f); fseek(f, 0, SEEK_SET);
    b = (unsigned char *)malloc((size_t)(len > 0 ? len : 0) + 1);
    if (len > 0 && fread(b, 1, (size_t)len, f) != (size_t)len) { fclose(f); free(b); return NULL; }
    fclose(f);
    b[len > 0 ? len : 0] = 0;            /* NUL-terminated, for text files */
    *n = (size_t)len;
    return b;
}

/* Regenerated bytes against the file: identical, or every tensor within 1e-12 (exact = 0). */
static int verify_one(lattn_ctx *ctx, const char *path, const unsigned char *mine, size_t n, int exact) {
    size_t m;
    unsigned char *theirs = read_file(path, &m);
    lattn_st_file a, b;
    int64_t i;
    int ok = 1;
    if (!theirs) { printf("MISSING %s\n", path); return 0; }
    if (m == n && memcmp(theirs, mine, n) == 0) { free(theirs); printf("identical %s\n", path); return 1; }
    if (exact || lattn_st_parse(ctx, theirs, m, &a) != LATTN_OK) { free(theirs); printf("DIFFERENT %s\n", path); return 0; }
    if (lattn_st_parse(ctx, mine, n, &b) != LATTN_OK || a.n_tensors != b.n_tensors) ok = 0;
    for (i = 0; ok && i < a.n_tensors; i++) {
        const lattn_st_tensor *ta = &a.tensors[i], *tb = lattn_st_find(&b, ta->name);
        double *x, *y;
        lattn_cmp r;
        if (!tb || tb->count != ta->count) { ok = 0; break; }
        x = (double *)malloc(ta->count * 8 + 8); y = (double *)malloc(ta->count * 8 + 8);
        lattn_st_to_f64(ctx, ta, x, ta->count); lattn_st_to_f64(ctx, tb, y, tb->count);
        lattn_compare(y, x, ta->count, 1e-12, &r);
        if (!r.pass) { printf("  %s: rel %.3g\n", ta->name, r.rel_rms); ok = 0; }
        free(x); free(y);
    }
    printf("%s %s\n", ok ? "within 1e-12" : "DIFFERENT", path);
    lattn_st_free(ctx, &a); lattn_st_free(ctx, &b); free(theirs);
    return ok;
}

static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) { if (*s == '"' || *s == '\\') fputc('\\', f); fputc(*s, f); }
    fputc('"', f);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[argc - 1] : "reference_outputs";
    int verify = argc > 2 && strncmp(argv[1], "--verify", 8) == 0, exact = verify && strcmp(argv[1], "--verify-exact") == 0;
    int ci, bad = 0;
    FILE *man = NULL;
    lattn_ctx ctx;
    char path[512];
    lattn_ctx_init(&ctx);
    if (!verify) {
        snprintf(path, sizeof path, "%s/MANIFEST.json", dir);
        man = fopen(path, "w");
        if (!man) { fprintf(stderr, "cannot write %s\n", path); return 1; }
        fprintf(man, "{\n  \"schema\": 1,\n  \"generator\": \"reference_outputs/generate.c v" GEN_VERSION "\",\n"
                     "  \"lattn_version\": \"" LATTN_VERSION_STRING "\",\n  \"command\": \"make reference\",\n"
                     "  \"reference_platform\": \"x86-64 Linux, gcc, -ffp-contract=off\",\n"
                     "  \"rng\": \"splitmix64, uniform (z >> 40) * 2^-24, normal Box-Muller on log(1 - u1) (lattn.h >>rng)\",\n"
                     "  \"tolerance\": {\"metric\": \"relative RMS ||out - ref|| / ||ref||\", \"fp32\": 1e-5, \"tf32\": 5e-3, \"bf16\": 2e-2},\n"
                     "  \"cases\": [\n");
    }
    for (ci = 0; ci < NCASES; ci++) {
        const gcase *c = &CASES[ci];
        gout g;
        unsigned char *buf;
        size_t n;
        char hex[65];
        int i;
        if (!build(c, &g, &ctx) || lattn_st_serialize(&ctx, g.e, g.n, g.meta, g.nm_meta, &buf, &n) != LATTN_OK) {
            fprintf(stderr, "case %s failed: %s\n", c->id, lattn_ctx_error(&ctx));
            return 1;
        }
        snprintf(path, sizeof path, "%s/%s/%s.safetensors", dir, c->mixer, c->id);
        if (verify) {
            char mpath[512];
            size_t mn;
            unsigned char *mf;
            sha256(buf, n, hex);
            snprintf(mpath, sizeof mpath, "%s/MANIFEST.json", dir);
            mf = read_file(mpath, &mn);
            if (exact && (!mf || !strstr((const char *)mf, hex))) { printf("sha256 of %s not in the manifest\n", c->id); bad++; }
            free(mf);
            bad += !verify_one(&ctx, path, buf, n, exact);
        }
        else {
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(buf, 1, n, f) != n) { fprintf(stderr, "cannot write %s (does %s/%s exist?)\n", path, dir, c->mixer); return 1; }
            fclose(f);
            sha256(buf, n, hex);
            fprintf(man, "    {\"id\": \"%s\", \"mixer\": \"%s\", \"file\": \"%s/%s.safetensors\", \"sha256\": \"%s\", \"seed\": %llu,\n      \"note\": ",
                    c->id, c->mixer, c->mixer, c->id, hex, (unsigned long long)c->seed);
            json_str(man, c->note);
            {                            /* the forms lattn-check runs, from the library */
                lattn_st_file pf;
                lattn_form fs[8];
                int nf = 0, k;
                if (lattn_st_parse(&ctx, buf, n, &pf) == LATTN_OK) { nf = lattn_case_forms(&pf, fs, 8); lattn_st_free(&ctx, &pf); }
                fputs(",\n      \"forms\": [", man);
                for (k = 0; k < nf; k++) fprintf(man, "%s\"%s\"", k ? ", " : "", lattn_form_name(fs[k]));
                fputs("],\n      \"metadata\": {", man);
            }
            for (i = 0; i < g.nm_meta; i++) { if (i) fputs(", ", man); json_str(man, g.meta[2 * i]); fputs(": ", man); json_str(man, g.meta[2 * i + 1]); }
            fputs("},\n      \"tensors\": [", man);
            for (i = 0; i < g.n; i++) {
                int d;
                fprintf(man, "%s{\"name\": \"%s\", \"dtype\": \"%s\", \"shape\": [", i ? ", " : "", g.e[i].name, lattn_dtype_name(g.e[i].dtype));
                for (d = 0; d < g.e[i].ndim; d++) fprintf(man, "%s%lld", d ? ", " : "", (long long)g.e[i].shape[d]);
                fputs("]}", man);
            }
            fprintf(man, "]}%s\n", ci + 1 < NCASES ? "," : "");
            printf("wrote %s (%zu bytes)\n", path, n);
        }
        lattn_free(&ctx, buf);
        release(&g);
    }
    if (man) { fputs("  ]\n}\n", man); fclose(man); }
    if (verify) printf("%d of %d cases reproduced\n", NCASES - bad, NCASES);
    return bad ? 1 : 0;
}
