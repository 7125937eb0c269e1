-- The sliding-window check: the same bucket rings and arithmetic as window-slab.ts and
-- memory-limiter.ts (the shared contract suite holds both to it).
--
-- KEYS[1]: the rings of one key or address, packed with struct as, per window, the head
-- bucket index (double), the running sum (uint32), then the bucket counts (uint32).
-- ARGV: now in ms ('' = the Redis server's clock), mode ('1' consume, '0' peek), TTL ms,
-- then per window: bucket ms, buckets, limit, units to take.
-- Reply: {allowed 0/1, remaining, resetAt (unix s), retryAfter (s), refusing window (1-based, 0 if none)};
-- remaining and resetAt describe window 1; with two windows, window 2's remaining and resetAt follow.
local now = tonumber(ARGV[1])
if now == nil then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local consume = ARGV[2] == '1'
local ttl = tonumber(ARGV[3])

-- vals holds, per window from index w.at: head bucket, sum, then the n bucket counts.
local wins = {}
local fmt = '<'
local at = 1
for w = 1, (#ARGV - 3) / 4 do
  local o = 3 + (w - 1) * 4
  local n = tonumber(ARGV[o + 2])
  wins[w] = { at = at, ms = tonumber(ARGV[o + 1]), n = n, limit = tonumber(ARGV[o + 3]), units = tonumber(ARGV[o + 4]) }
  fmt = fmt .. 'dI4' .. string.rep('I4', n)
  at = at + 2 + n
end
local size = struct.size(fmt)
local raw = redis.call('GET', KEYS[1])
if not raw or #raw ~= size then raw = string.rep('\0', size) end
local vals = { struct.unpack(fmt, raw) }
vals[#vals] = nil -- struct.unpack's trailing read position

for _, win in ipairs(wins) do
  local h, n = win.at, win.n
  local bucket = math.floor(now / win.ms)
  local head = vals[h]
  if bucket > head then
    if bucket - head >= n then
      for i = h + 1, h + 1 + n do vals[i] = 0 end
    else
      local sum = vals[h + 1]
      for b = head + 1, bucket do
        local i = h + 2 + b % n
        sum = sum - vals[i]
        vals[i] = 0
      end
      vals[h + 1] = sum
    end
    vals[h] = bucket
  end
end

-- Time (ms) at which `units` of the window's counted units have left it, oldest first; nil if it holds fewer.
local function freed_at(win, units)
  local h, n = win.at, win.n
  if units > vals[h + 1] then return nil end
  local head = vals[h]
  local from = head - n + 1
  if from < 0 then from = 0 end
  local freed = 0
  for b = from, head do
    freed = freed + vals[h + 2 + b % n]
    if freed >= units then return (b + n) * win.ms end
  end
  return nil
end

-- Remaining (never negative) and reset (unix s: when the oldest unit leaves; now when empty) of a window.
local function window_status(win)
  local used = vals[win.at + 1]
  local reset = math.ceil(now / 1000)
  if used > 0 then reset = math.ceil(freed_at(win, 1) / 1000) end
  local remaining = win.limit - used
  if remaining < 0 then remaining = 0 end
  return remaining, reset
end

local function status(ok, retry, refusing)
  local remaining, reset = window_status(wins[1])
  if ok == 0 then remaining = 0 end
  local reply = { ok, remaining, reset, retry, refusing }
  if wins[2] then
    local remaining2, reset2 = window_status(wins[2])
    reply[6] = remaining2
    reply[7] = reset2
  end
  return reply
end

if not consume then return status(1, 0, 0) end

local retry, refusing = 0, 0
for w, win in ipairs(wins) do
  local excess = vals[win.at + 1] + win.units - win.limit
  if excess > 0 then
    local t = freed_at(win, excess)
    local r
    if t == nil then
      r = math.ceil((win.n - 1) * win.ms / 1000)
    else
      r = math.ceil((t - now) / 1000)
      if r < 1 then r = 1 end
    end
    if r > retry then retry, refusing = r, w end
  end
end
if refusing > 0 then return status(0, retry, refusing) end

for _, win in ipairs(wins) do
  local h = win.at
  local i = h + 2 + vals[h] % win.n
  vals[i] = vals[i] + win.units
  vals[h + 1] = vals[h + 1] + win.units
end
redis.call('SET', KEYS[1], struct.pack(fmt, unpack(vals)), 'PX', ttl)
return status(1, 0, 0)
