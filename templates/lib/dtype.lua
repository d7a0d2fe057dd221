-- Element types as kernels see them. f16 and bf16 are stored as 16-bit
-- integers and converted with PTX cvt, so generated sources need no headers
-- and compile the same under NVRTC and nvcc.
local M = {}

local info = {
  f32  = { ctype = "float",          size = 4 },
  f16  = { ctype = "unsigned short", size = 2 },
  bf16 = { ctype = "unsigned short", size = 2 },
}

function M.known(dt) return info[dt] ~= nil end
function M.ctype(dt) return assert(info[dt], "unknown dtype " .. tostring(dt)).ctype end
function M.size(dt) return assert(info[dt], "unknown dtype " .. tostring(dt)).size end

-- Device helpers every generated source starts with: conversions to and from
-- float for each storage type, named ld_<dt> / st_<dt>.
M.prelude = [[
#define AIT_DEV __device__ __forceinline__
AIT_DEV float ld_f32(float v) { return v; }
AIT_DEV float st_f32(float v) { return v; }
AIT_DEV float ld_f16(unsigned short h) {
  float f; asm("{ .reg .b16 t; mov.b16 t, %1; cvt.f32.f16 %0, t; }" : "=f"(f) : "h"(h)); return f;
}
AIT_DEV unsigned short st_f16(float f) {
  unsigned short h; asm("{ .reg .b16 t; cvt.rn.f16.f32 t, %1; mov.b16 %0, t; }" : "=h"(h) : "f"(f)); return h;
}
AIT_DEV float ld_bf16(unsigned short h) { return __uint_as_float(((unsigned int)h) << 16); }
AIT_DEV unsigned short st_bf16(float f) {
  unsigned short h; asm("{ .reg .b16 t; cvt.rn.bf16.f32 t, %1; mov.b16 %0, t; }" : "=h"(h) : "f"(f)); return h;
}
]]

-- Vector of n elements of dt, aligned to its size (capped at 16 bytes, so
-- wider vectors become several 16-byte accesses).
function M.vec_struct(dt, n)
  local bytes = M.size(dt) * n
  local align = math.min(bytes, 16)
  local name = string.format("v%d_%s", n, dt)
  return name, string.format("struct __align__(%d) %s { %s e[%d]; };\n",
    align, name, M.ctype(dt), n)
end

return M
