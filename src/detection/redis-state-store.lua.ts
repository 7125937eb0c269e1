/**
 * One StateStore op on one record (design 7). KEYS[1] is the record: a hash, one field per
 * `field`, each value the JSON of that field's state (the same shapes and rules as
 * memory-state-store.ts, which is the reference). ARGV[1] kind, ARGV[2] field, ARGV[3] event
 * time, then the kind's own arguments (redis-state-store.ts lists them). Every write extends the
 * record's lifetime to at least its ttl; reads never create a record. Answers one string that
 * redis-state-store.ts decodes per kind.
 */
export const STATE_OP_LUA = `
local K = KEYS[1]
local kind, F, at = ARGV[1], ARGV[2], tonumber(ARGV[3])

local function touch(ttl)
  local want = math.ceil(ttl) + 1000
  if redis.call('PTTL', K) < want then redis.call('PEXPIRE', K, want) end
end
local function save(v) redis.call('HSET', K, F, v) end
local function slice(t, from)
  local out = {}
  for i = from, #t do out[#out + 1] = t[i] end
  return out
end

if kind == 'w' then
  local win, amount, max = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
  local raw = redis.call('HGET', K, F)
  local w
  if raw then w = cjson.decode(raw)
  elseif amount ~= 0 then w = { e = at, t = {}, a = {}, s = 0 }
  else return '{"sum":0,"entries":0}' end
  if at > w.e then w.e = at end
  local start = w.e - win
  local t, a = w.t, w.a
  local n = 0
  while n < #t and t[n + 1] <= start do n = n + 1 end
  local function drop(k)
    for i = 1, k do w.s = w.s - a[i] end
    t, a = slice(t, k + 1), slice(a, k + 1)
  end
  if n > 0 then drop(n) end
  if amount ~= 0 and at > start then
    local lo, hi = 1, #t + 1
    while lo < hi do
      local mid = math.floor((lo + hi) / 2)
      if t[mid] <= at then lo = mid + 1 else hi = mid end
    end
    table.insert(t, lo, at)
    table.insert(a, lo, amount)
    w.s = w.s + amount
    if #t > max then drop(#t - max) end
  end
  w.t, w.a = t, a
  save(cjson.encode(w))
  if amount ~= 0 then touch(win) end
  return cjson.encode({ sum = w.s, entries = #t })
end

if kind == 'd' then
  local win, adding, member, fewArg, max = tonumber(ARGV[4]), ARGV[5] == '1', ARGV[6], ARGV[7], tonumber(ARGV[8])
  local raw = redis.call('HGET', K, F)
  local d
  if raw then d = cjson.decode(raw)
  elseif adding then d = { e = at, m = {} }
  else return '{"distinct":0,"few":0,"memberSeen":false}' end
  if at > d.e then d.e = at end
  local start = d.e - win
  local m = d.m
  local n = 0
  while n < #m and m[n + 1][2] <= start do n = n + 1 end
  if n > 0 then m = slice(m, n + 1) end
  local memberSeen = false
  if adding and at > start then
    local idx
    for i = 1, #m do if m[i][1] == member then idx = i break end end
    if idx and m[idx][2] > start then
      memberSeen = true
      local tally = m[idx]
      tally[3] = tally[3] + 1
      if at > tally[2] then
        tally[2] = at
        table.remove(m, idx)
        m[#m + 1] = tally
      end
    else
      if idx then table.remove(m, idx) end
      m[#m + 1] = { member, at, 1 }
      if #m > max then table.remove(m, 1) end
    end
  end
  d.m = m
  save(cjson.encode(d))
  if adding then touch(win) end
  if fewArg == '' then return cjson.encode({ distinct = #m, few = 0, memberSeen = memberSeen }) end
  local few, distinct = tonumber(fewArg), 0
  local nfew = 0
  for i = 1, #m do
    if m[i][2] > start then
      distinct = distinct + 1
      if m[i][3] <= few then nfew = nfew + 1 end
    end
  end
  return cjson.encode({ distinct = distinct, few = nfew, memberSeen = memberSeen })
end

if kind == 'l' then
  local ttl, storing, value = tonumber(ARGV[4]), ARGV[5] == '1', ARGV[6]
  local raw = redis.call('HGET', K, F)
  if storing then
    local newer = true
    if raw then newer = at >= tonumber(string.sub(raw, 1, string.find(raw, '|', 1, true) - 1)) end
    if newer then save(ARGV[3] .. '|' .. value) end
    touch(ttl)
  end
  return raw or ''
end

if kind == 's' then
  local member, within, ttl, readOnly, max = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7] == '1', tonumber(ARGV[8])
  local raw = redis.call('HGET', K, F)
  local s
  if raw then s = cjson.decode(raw)
  elseif readOnly then return '{"seen":false,"size":0}'
  else s = {} end
  local found
  for i = 1, #s, 2 do if s[i] == member then found = i break end end
  local seen = found ~= nil and s[found + 1] >= at - within
  if not readOnly then
    if found then
      if s[found + 1] < at then s[found + 1] = at end
    else
      s[#s + 1] = member
      s[#s + 1] = at
      if #s > max * 2 then
        local oldest = 1
        for i = 3, #s, 2 do if s[i + 1] < s[oldest + 1] then oldest = i end end
        table.remove(s, oldest)
        table.remove(s, oldest)
      end
    end
    save(cjson.encode(s))
    touch(ttl)
  end
  return cjson.encode({ seen = seen, size = #s / 2 })
end

if kind == 'c' then
  local amount, ttl = tonumber(ARGV[4]), tonumber(ARGV[5])
  local value = (tonumber(redis.call('HGET', K, F)) or 0) + amount
  save(tostring(value))
  touch(ttl)
  return tostring(value)
end

if kind == 'q' then
  local stage, win, ref = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
  local step = { stage, at, ref }
  local raw = redis.call('HGET', K, F)
  if stage == 0 then
    local seq = raw and cjson.decode(raw) or {}
    local cur = seq.s0
    if cur == nil or cur.s <= at then seq.s0 = { s = at, a = at, st = { step } } end
    save(cjson.encode(seq))
    touch(win)
    return cjson.encode({ step })
  end
  if not raw then return '' end
  local seq = cjson.decode(raw)
  local prev = seq['s' .. (stage - 1)]
  if prev == nil or prev.a > at or at - prev.s > win then return '' end
  local steps = slice(prev.st, 1)
  steps[#steps + 1] = step
  local cur = seq['s' .. stage]
  if cur == nil or cur.s <= prev.s then seq['s' .. stage] = { s = prev.s, a = at, st = steps } end
  save(cjson.encode(seq))
  touch(win)
  return cjson.encode(steps)
end

local function live(a, win) return a and at >= a.l - win and at <= a.l + win end

if kind == 'ao' then
  local id, win, hasEvent, eventId, max = ARGV[4], tonumber(ARGV[5]), ARGV[6] == '1', ARGV[7], tonumber(ARGV[8])
  local raw = redis.call('HGET', K, F)
  local a = raw and cjson.decode(raw)
  local opened = false
  if live(a, win) then
    a.c = a.c + 1
    if at > a.l then a.l = at end
    if at < a.f then a.f = at end
    if hasEvent then
      local e = a.e
      e[#e + 1] = eventId
      if #e > max then a.e = slice(e, #e - max + 1) end
    end
  else
    a = { i = id, c = 1, f = at, l = at, e = {} }
    if hasEvent then a.e = { eventId } end
    opened = true
  end
  local encoded = cjson.encode(a)
  save(encoded)
  touch(win)
  return (opened and '1' or '0') .. encoded
end

if kind == 'ap' then
  local raw = redis.call('HGET', K, F)
  if raw and live(cjson.decode(raw), tonumber(ARGV[4])) then return raw end
  return ''
end

if kind == 'x' then
  if F == '*' then return tostring(redis.call('DEL', K)) end
  return tostring(redis.call('HDEL', K, F))
end

return redis.error_reply('unknown state op ' .. tostring(kind))
`;
