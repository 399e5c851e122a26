// Instantiates the modifier generated from all-ops.mlir (the path in
// ATTN_GENERATED) with the warp emulator's Ops, as the emulator tests do, so
// that every helper the generator emits is compiled for the host.
#define ATTN_SCORE_MOD_GENERATED(T, fn) using GenMod_##fn = T;
#include "emu/warp_emu.h"
#include "score_mod.h"
#include ATTN_GENERATED

float run_all_ops(const attn::detail::FwdParams &p) {
  return GenMod_all_ops::apply<emu::EmuOps>(p, 1.f, 0, 1, 2, 3);
}
