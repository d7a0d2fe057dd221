-- Transpose through a shared-memory tile of tr x tc elements of x. Each
-- thread first issues all its loads of `vin` bytes along x's rows (all in
-- flight before the first shared-memory store), then, after one barrier,
-- reads micro-tiles of (vout bytes of rows) x (pcb bytes of columns) and
-- writes one vector of `vout` bytes along y's rows per column: with pcb > one
-- element the micro-tile is transposed in registers, so shared memory is read
-- in vectors too. `stage` = cp moves the tile into shared memory with
-- cp.async instead (no registers held, every copy in flight at once).
--
-- Shared-memory layout: `pad` (each tile row padded) or `swz` (16-byte chunks
-- XOR-swizzled by row). The pad amount or the swizzle shift is not searched:
-- a bank model of one warp's accesses picks the cheapest for the config, and
-- configs whose best layout still conflicts are rejected.
--
-- A uniform run-time test takes the vector path only when cols and rows allow
-- vectors of vin and vout elements and the pointers are aligned; otherwise
-- the same tiles are moved one element at a time.
local dtype = lib("dtype")
local kernel = lib("kernel")
local rows = lib("rows")

local t = {
  op = OP.name, name = "tile", min_cc = 80, dtypes = OP.dtypes,
  params = {
    { "tr", { 32, 64, 128 } },
    { "tc", { 32, 64, 128 } },
    { "threads", { 128, 256, 512 } },
    { "vin", { 2, 4, 8, 16 } },
    { "vout", { 2, 4, 8, 16 } },
    { "pcb", { 4, 16 } },
    { "layout", { "pad", "swz" } },
    { "order", { 0, 1 } },
    { "stage", { "reg", "cp" } },
  },
}

local function pow2_divisor(n, cap)
  local d = 1
  while d < cap and n % (d * 2) == 0 do d = d * 2 end
  return d
end

-- The geometry of a config: element counts per access and per thread.
local function geom(p, dt)
  local s = dtype.size(dt)
  local G = {
    s = s, TR = p.tr, TC = p.tc, NT = p.threads,
    VI = math.max(1, p.vin // s), VO = math.max(1, p.vout // s), PC = math.max(1, p.pcb // s),
  }
  G.NCV = G.TC // G.VI
  G.NRV = G.TR // G.VO
  G.NCB = G.TC // G.PC
  G.LPT = G.TR * G.NCV // G.NT
  G.SPT = G.NRV * G.NCB // G.NT
  return G
end

-- Element offset of (r, c) in the tile, and the widest access (elements)
-- that stays aligned, for a layout choice L = { pad = n } or { shift = n }.
local function sidx(G, L, r, c)
  if L.pad then return r * (G.TC + L.pad) + c end
  local mask = G.NCV - 1
  return r * G.TC + (((c // G.VI) ~ ((r >> L.shift) & mask)) * G.VI) + c % G.VI
end
local function widths(G, L)
  if L.pad then
    local pitch = G.TC + L.pad
    return pow2_divisor(pitch, G.VI), pow2_divisor(pitch, G.PC)
  end
  return G.VI, G.PC
end

-- Shared-memory wavefronts of one warp instruction: 16-byte accesses go in
-- four phases of 8 lanes, 8-byte ones in two of 16, narrower ones in one;
-- a phase costs as many wavefronts as the most distinct words in one bank.
local function wavefronts(addrs, W)
  local per = W >= 16 and 8 or (W == 8 and 16 or 32)
  local total, phases = 0, 0
  for g0 = 0, 31, per do
    local banks, any = {}, false
    for l = g0, g0 + per - 1 do
      local a = addrs[l]
      if a then
        any = true
        local w0 = a // 4
        for w = w0, w0 + math.max(1, W // 4) - 1 do
          local b = w % 32
          banks[b] = banks[b] or {}
          banks[b][w] = true
        end
      end
    end
    if any then
      local deg = 0
      for _, set in pairs(banks) do
        local n = 0
        for _ in pairs(set) do n = n + 1 end
        if n > deg then deg = n end
      end
      total, phases = total + deg, phases + 1
    end
  end
  return total, phases
end

-- Wavefronts of the store phase (into shared memory) and the load phase (out
-- of it) for warps 0 and the last, against the ideal.
local function cost(G, L)
  local SWE, SRE = widths(G, L)
  local total, ideal = 0, 0
  for _, warp in ipairs({ 0, G.NT // 32 - 1 }) do
    for i = 0, G.LPT - 1 do
      for w = 0, G.VI // SWE - 1 do
        local addrs = {}
        for l = 0, 31 do
          local q = warp * 32 + l + i * G.NT
          local r, cv = q // G.NCV, q % G.NCV
          addrs[l] = sidx(G, L, r, cv * G.VI + w * SWE) * G.s
        end
        local a, b = wavefronts(addrs, SWE * G.s)
        total, ideal = total + a, ideal + b
      end
    end
    for i = 0, G.SPT - 1 do
      for k = 0, G.VO - 1 do
        for w = 0, G.PC // SRE - 1 do
          local addrs = {}
          for l = 0, 31 do
            local q = warp * 32 + l + i * G.NT
            local rv, cb = q % G.NRV, q // G.NRV
            addrs[l] = sidx(G, L, rv * G.VO + k, cb * G.PC + w * SRE) * G.s
          end
          local a, b = wavefronts(addrs, SRE * G.s)
          total, ideal = total + a, ideal + b
        end
      end
    end
  end
  return total, ideal
end

-- The cheapest layout of the chosen kind, memoized per geometry.
local memo = {}
local function best_layout(p, dt)
  local G = geom(p, dt)
  local key = string.format("%d/%d/%d/%d/%d/%d/%d/%s", G.s, G.TR, G.TC, G.NT, G.VI, G.VO, G.PC, p.layout)
  if memo[key] then return memo[key], G end
  local best
  local cands = {}
  if p.layout == "pad" then
    for pad = 0, 16 // G.s * 2 do cands[#cands + 1] = { pad = pad } end
  else
    for shift = 0, 5 do cands[#cands + 1] = { shift = shift } end
  end
  for _, L in ipairs(cands) do
    local total, ideal = cost(G, L)
    L.total, L.ideal = total, ideal
    if not best or total < best.total then best = L end
  end
  memo[key] = best
  return best, G
end

local function smem_bytes(G, L)
  return G.TR * (G.TC + (L.pad or 0)) * G.s
end

-- Largest vector (bytes, <= 16) along a dimension of n elements.
local function best_bytes(n, s)
  local vb = 16
  while vb > s and (n * s) % vb ~= 0 do vb = vb // 2 end
  return vb
end

t.constraints = function(p, shape, dt, dev)
  local s = dtype.size(dt)
  if p.vin < s or p.vout < s then return false, "vector narrower than an element" end
  local bi, bo = best_bytes(shape.cols, s), best_bytes(shape.rows, s)
  if p.vin > bi then return false, "cols do not allow vin: the scalar path would run" end
  if p.vout > bo then return false, "rows do not allow vout: the scalar path would run" end
  if p.vin < bi and p.vin < 16 then return false, "narrower loads than the shape allows" end
  if p.vout < bo and p.vout < 16 then return false, "narrower stores than the shape allows" end
  if p.pcb < s then return false, "column group narrower than an element" end
  local G = geom(p, dt)
  if G.VI > G.TC or G.VO > G.TR or G.PC > G.TC then return false, "vector wider than the tile" end
  if G.LPT < 1 or G.TR * G.NCV % G.NT ~= 0 then return false, "loads do not divide among the threads" end
  if G.SPT < 1 or G.NRV * G.NCB % G.NT ~= 0 then return false, "stores do not divide among the threads" end
  if G.LPT > 16 then return false, "more than 16 loads per thread" end
  if G.SPT * G.VO * G.PC * s > 256 then return false, "more than 256 bytes of micro-tiles per thread" end
  if p.layout == "swz" and G.PC > G.VI then return false, "swizzled reads must stay inside a chunk" end
  if p.layout == "swz" and G.NCV < 2 then return false, "one chunk per row: nothing to swizzle" end
  if p.stage == "cp" then
    local swe = widths(G, best_layout(p, dt))
    if swe * s < 4 then return false, "cp.async moves 4, 8 or 16 bytes: shared-memory chunks are narrower" end
  end
  -- tiles larger than the tensor only waste threads
  if p.tr > 32 and p.tr // 2 >= shape.rows then return false, "tile taller than the tensor" end
  if p.tc > 32 and p.tc // 2 >= shape.cols then return false, "tile wider than the tensor" end
  local L = best_layout(p, dt)
  if smem_bytes(G, L) > 48 * 1024 then return false, "tile over 48 KB of shared memory" end
  if L.total > 1.25 * L.ideal then
    return false, string.format("bank conflicts: %d wavefronts for %d", L.total, L.ideal)
  end
  return true
end

t.supports = function(shape, dt, dev)
  if shape.rows < 1 or shape.cols < 1 then return false, "empty tensor" end
  if t.default(shape, dt, dev) == nil then return false, "no conflict-free tile for this type" end
  return true
end

t.default = function(shape, dt, dev)
  local s = dtype.size(dt)
  local bi, bo = best_bytes(shape.cols, s), best_bytes(shape.rows, s)
  for _, tile in ipairs({ { 64, 64 }, { 32, 32 }, { 32, 64 }, { 64, 32 }, { 128, 64 }, { 64, 128 } }) do
    for _, layout in ipairs({ "swz", "pad" }) do
      for _, pcb in ipairs({ 16, 4 }) do
        for _, threads in ipairs({ 256, 128, 512 }) do
          local p = { tr = tile[1], tc = tile[2], threads = threads, vin = bi, vout = bo, pcb = pcb,
                      layout = layout, order = 0, stage = "reg" }
          if t.constraints(p, shape, dt, dev) then return p end
        end
      end
    end
  end
  return nil
end

t.launch = function(p, dt, dev)
  local L, G = best_layout(p, dt)
  return {
    grid = { string.format("cdiv(rows, %d) * cdiv(cols, %d)", p.tr, p.tc), 1, 1 },
    block = { p.threads, 1, 1 },
    smem = smem_bytes(G, L),
  }
end

t.source = function(p, dt, dev, name)
  local L, G = best_layout(p, dt)
  local SWE, SRE = widths(G, L)
  local sidx_c
  if L.pad then
    sidx_c = string.format("return r * %d + c;", G.TC + L.pad)
  else
    sidx_c = string.format("return r * TC + ((((c / VI) ^ (r >> %d)) & %d) * VI) + c %% VI;", L.shift, G.NCV - 1)
  end
  -- note: ((c/VI) ^ (r>>shift)) & mask == (c/VI) ^ ((r>>shift) & mask) for c < TC
  return rows.header(dt, 0, 0) .. string.format([[
#define TR %d
#define TC %d
#define NT %d
#define VI %d
#define VO %d
#define PC %d
#define NCV %d
#define NRV %d
#define LPT %d
#define SPT %d
#define SWE %d
#define SRE %d
#define ORDER %d
#define STAGE_CP %d

// Element offset of (r, c) in the shared tile (layout %s).
AIT_DEV int sidx(int r, int c) { %s }

// cp.async of SWE elements (4, 8 or 16 bytes) straight into shared memory.
AIT_DEV void cp_chunk(T* dst, const T* src) {
  const unsigned d = smaddr(dst);
  if constexpr (SWE * sizeof(T) == 16)
    asm volatile("cp.async.cg.shared.global [%%0], [%%1], 16;" :: "r"(d), "l"(src) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%%0], [%%1], %%2;" :: "r"(d), "l"(src), "n"((int)(SWE * sizeof(T))) : "memory");
}

AIT_DEV void tile_vec(const T* __restrict__ x, T* __restrict__ y, long long rows, long long cols,
                      T* sm, long long r0, long long c0) {
  const int tid = threadIdx.x;
#if STAGE_CP
  // the tile goes to shared memory without passing through registers: every
  // thread's copies are in flight at once
#pragma unroll
  for (int i = 0; i < LPT; ++i) {
    const int q = tid + i * NT, r = q / NCV, cv = q %% NCV;
    if (r0 + r < rows && c0 + cv * VI < cols) {
#pragma unroll
      for (int w = 0; w < VI / SWE; ++w)
        cp_chunk(sm + sidx(r, cv * VI + w * SWE), x + (r0 + r) * cols + c0 + cv * VI + w * SWE);
    }
  }
  asm volatile("cp.async.wait_all;" ::: "memory");
#else
  VecT<VI> v[LPT];
  bool ok[LPT];
#pragma unroll
  for (int i = 0; i < LPT; ++i) {
    const int q = tid + i * NT, r = q / NCV, cv = q %% NCV;
    ok[i] = r0 + r < rows && c0 + cv * VI < cols;
    if (ok[i]) v[i] = ldv<VI>(x + (r0 + r) * cols + c0 + cv * VI);
  }
#pragma unroll
  for (int i = 0; i < LPT; ++i) if (ok[i]) {
    const int q = tid + i * NT, r = q / NCV, cv = q %% NCV;
#pragma unroll
    for (int w = 0; w < VI / SWE; ++w) {
      VecT<SWE> u;
#pragma unroll
      for (int z = 0; z < SWE; ++z) u.e[z] = v[i].e[w * SWE + z];
      *reinterpret_cast<VecT<SWE>*>(sm + sidx(r, cv * VI + w * SWE)) = u;
    }
  }
#endif
  __syncthreads();
#pragma unroll
  for (int i = 0; i < SPT; ++i) {
    const int q = tid + i * NT, rv = q %% NRV, cb = q / NRV;
    const long long yr = r0 + rv * VO;
    if (yr < rows) {
      T e[VO][PC];
#pragma unroll
      for (int k = 0; k < VO; ++k) {
#pragma unroll
        for (int w = 0; w < PC / SRE; ++w) {
          const VecT<SRE> u = *reinterpret_cast<const VecT<SRE>*>(sm + sidx(rv * VO + k, cb * PC + w * SRE));
#pragma unroll
          for (int z = 0; z < SRE; ++z) e[k][w * SRE + z] = u.e[z];
        }
      }
#pragma unroll
      for (int pc = 0; pc < PC; ++pc) {
        const long long c = c0 + cb * PC + pc;
        if (c < cols) {
          VecT<VO> o;
#pragma unroll
          for (int k = 0; k < VO; ++k) o.e[k] = e[k][pc];
          stv<VO>(y + c * rows + yr, o);
        }
      }
    }
  }
}

// One element at a time, for shapes or pointers the vectors do not fit.
AIT_DEV void tile_scalar(const T* __restrict__ x, T* __restrict__ y, long long rows, long long cols,
                         T* sm, long long r0, long long c0) {
  for (int q = threadIdx.x; q < TR * TC; q += NT) {
    const int r = q / TC, c = q %% TC;
    if (r0 + r < rows && c0 + c < cols) sm[r * TC + c] = x[(r0 + r) * cols + c0 + c];
  }
  __syncthreads();
  for (int q = threadIdx.x; q < TR * TC; q += NT) {
    const int c = q / TR, r = q %% TR;
    if (r0 + r < rows && c0 + c < cols) y[(c0 + c) * rows + r0 + r] = sm[r * TC + c];
  }
}

extern "C" __global__ void __launch_bounds__(NT, 1) %s(%s) {
  extern __shared__ __align__(16) unsigned char smraw[];
  T* sm = reinterpret_cast<T*>(smraw);
  const long long ntc = (cols + TC - 1) / TC, ntr = (rows + TR - 1) / TR;
  const long long b = blockIdx.x;
  const long long tr = ORDER ? b %% ntr : b / ntc;
  const long long tc = ORDER ? b / ntr : b %% ntc;
  const bool vok = cols %% VI == 0 && rows %% VO == 0 &&
                   (unsigned long long)x %% (VI * sizeof(T)) == 0 &&
                   (unsigned long long)y %% (VO * sizeof(T)) == 0;
  if (vok) tile_vec(x, y, rows, cols, sm, tr * TR, tc * TC);
  else tile_scalar(x, y, rows, cols, sm, tr * TR, tc * TC);
}
]], G.TR, G.TC, G.NT, G.VI, G.VO, G.PC, G.NCV, G.NRV, G.LPT, G.SPT, SWE, SRE, p.order, p.stage == "cp" and 1 or 0,
    L.pad and ("pad " .. L.pad) or ("swizzle shift " .. L.shift), sidx_c,
    name, kernel.params(OP, dt))
end

return t
