/**
 * The sliding-window check in Lua: the same bucket rings and arithmetic as
 * window-slab.ts / memory-limiter.ts (the shared contract suite holds both to it).
 *
 * KEYS[1]: the rings of one key or address, packed with struct as, per window, the head
 * bucket index (double) then the bucket counts (uint32).
 * ARGV: now in ms ('' = the Redis server's clock), mode ('1' consume, '0' peek), TTL ms,
 * then per window: bucket ms, buckets, limit, units to take.
 * Reply: {allowed 0/1, remaining, resetAt (unix s), retryAfter (s), refusing window (1-based, 0 if none)};
 * remaining and resetAt describe window 1.
 */
export const SLIDING_WINDOW_LUA = `
local now = tonumber(ARGV[1])
if now == nil then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local consume = ARGV[2] == '1'
local ttl = tonumber(ARGV[3])
local wins = {}
local fmt = '<'
local count = (#ARGV - 3) / 4
for w = 1, count do
  local o = 3 + (w - 1) * 4
  wins[w] = { ms = tonumber(ARGV[o + 1]), n = tonumber(ARGV[o + 2]), limit = tonumber(ARGV[o + 3]), units = tonumber(ARGV[o + 4]) }
  fmt = fmt .. 'd' .. string.rep('I4', wins[w].n)
end

local raw = redis.call('GET', KEYS[1])
local vals = nil
if raw and #raw == struct.size(fmt) then vals = { struct.unpack(fmt, raw) } end

local p = 1
for w = 1, count do
  local win = wins[w]
  local c = {}
  local head = 0
  if vals then
    head = vals[p]
    p = p + 1
    for i = 1, win.n do c[i] = vals[p]; p = p + 1 end
  else
    for i = 1, win.n do c[i] = 0 end
  end
  local bucket = math.floor(now / win.ms)
  if bucket > head then
    if bucket - head >= win.n then
      for i = 1, win.n do c[i] = 0 end
    else
      for b = head + 1, bucket do c[b % win.n + 1] = 0 end
    end
    head = bucket
  end
  local sum = 0
  for i = 1, win.n do sum = sum + c[i] end
  win.c, win.head, win.sum = c, head, sum
end

local function freed_at(win, units)
  if units > win.sum then return nil end
  local freed = 0
  local from = win.head - win.n + 1
  if from < 0 then from = 0 end
  for b = from, win.head do
    freed = freed + win.c[b % win.n + 1]
    if freed >= units then return (b + win.n) * win.ms end
  end
  return nil
end

local function reset_at(win)
  if win.sum > 0 then return math.ceil(freed_at(win, 1) / 1000) end
  return math.ceil(now / 1000)
end

local first = wins[1]
local function remaining()
  local r = first.limit - first.sum
  if r < 0 then return 0 end
  return r
end

if not consume then return { 1, remaining(), reset_at(first), 0, 0 } end

local retry, refusing = 0, 0
for w = 1, count do
  local win = wins[w]
  local excess = win.sum + win.units - win.limit
  if excess > 0 then
    local at = freed_at(win, excess)
    local r
    if at == nil then
      r = math.ceil((win.n - 1) * win.ms / 1000)
    else
      r = math.ceil((at - now) / 1000)
      if r < 1 then r = 1 end
    end
    if r > retry then retry, refusing = r, w end
  end
end
if refusing > 0 then return { 0, 0, reset_at(first), retry, refusing } end

local out = {}
for w = 1, count do
  local win = wins[w]
  local at = win.head % win.n + 1
  win.c[at] = win.c[at] + win.units
  win.sum = win.sum + win.units
  out[#out + 1] = win.head
  for i = 1, win.n do out[#out + 1] = win.c[i] end
end
redis.call('SET', KEYS[1], struct.pack(fmt, unpack(out)), 'PX', ttl)
return { 1, remaining(), reset_at(first), 0, 0 }
`;
