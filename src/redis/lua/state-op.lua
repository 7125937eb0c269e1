-- One StateStore op on one record. KEYS[1] is the record: a hash, one field per `field`, each
-- value that field's state (JSON, or for windows and distinct sets a small meta string whose
-- entries live in sorted sets KEYS[2..3] named `<record>:w|d|t:<field>`, so a hot window costs
-- O(log n), not a decode of every entry); alert fields are indexed by last sighting in the sorted
-- set `<record>:a` (KEYS[2] of alert.open), so the record's bound on alert types finds the one
-- to drop without decoding the others. The rules are those of memory-state-store.ts, which is
-- the reference. ARGV[1] kind, ARGV[2] field, ARGV[3] event time, then the kind's own arguments
-- (state-store.ts lists them). Every write extends the record's lifetime to at least its ttl;
-- reads never create a record. Answers one string that state-store.ts decodes per kind.
local K = KEYS[1]
local kind, F, at = ARGV[1], ARGV[2], tonumber(ARGV[3])

local function touchKey(key, ttl)
  local want = math.ceil(ttl) + 1000
  if redis.call('PTTL', key) < want then redis.call('PEXPIRE', key, want) end
end
local function touch(ttl) touchKey(K, ttl) end
local function save(v) redis.call('HSET', K, F, v) end
local function slice(t, from)
  local out = {}
  for i = from, #t do out[#out + 1] = t[i] end
  return out
end

-- window.add: meta 'w|end|sum|seq' in the record, entries in KEYS[2] (zset 'seq:amount' -> event time).
if kind == 'w' then
  local Z = KEYS[2]
  local win, amount, max = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
  local raw = redis.call('HGET', K, F)
  local e, sum, seq
  if raw then
    local p1 = string.find(raw, '|', 3, true)
    local p2 = string.find(raw, '|', p1 + 1, true)
    e, sum, seq = tonumber(string.sub(raw, 3, p1 - 1)), tonumber(string.sub(raw, p1 + 1, p2 - 1)), tonumber(string.sub(raw, p2 + 1))
  elseif amount ~= 0 then e, sum, seq = at, 0, 0
  else return '{"sum":0,"entries":0}' end
  if at > e then e = at end
  local start = e - win
  local function subtract(entries)
    for i = 1, #entries do
      local m = entries[i]
      sum = sum - tonumber(string.sub(m, string.find(m, ':', 1, true) + 1))
    end
  end
  local gone = redis.call('ZRANGEBYSCORE', Z, '-inf', start)
  if #gone > 0 then
    subtract(gone)
    redis.call('ZREMRANGEBYSCORE', Z, '-inf', start)
  end
  if amount ~= 0 and at > start then
    seq = seq + 1
    redis.call('ZADD', Z, at, string.format('%012d', seq) .. ':' .. ARGV[5])
    sum = sum + amount
    local n = redis.call('ZCARD', Z)
    if n > max then
      local popped = redis.call('ZPOPMIN', Z, n - max)
      local members = {}
      for i = 1, #popped, 2 do members[#members + 1] = popped[i] end
      subtract(members)
    end
  end
  save('w|' .. string.format('%.17g', e) .. '|' .. string.format('%.17g', sum) .. '|' .. seq)
  if amount ~= 0 then
    touch(win)
    touchKey(Z, win)
  end
  return cjson.encode({ sum = sum, entries = redis.call('ZCARD', Z) })
end

-- distinct.add: meta 'd|end' in the record, KEYS[2] zset member -> last seen, KEYS[3] hash member -> tries.
if kind == 'd' then
  local Z, T = KEYS[2], KEYS[3]
  local win, adding, member, fewArg, max = tonumber(ARGV[4]), ARGV[5] == '1', ARGV[6], ARGV[7], tonumber(ARGV[8])
  -- remove: forget the member, then answer as a read (memberSeen: whether it was kept).
  local removed = false
  if adding and ARGV[9] == '1' then
    adding = false
    removed = redis.call('ZREM', Z, member) == 1
    redis.call('HDEL', T, member)
  end
  local raw = redis.call('HGET', K, F)
  local e
  if raw then e = tonumber(string.sub(raw, 3))
  elseif adding then e = at
  else return '{"distinct":0,"few":0,"memberSeen":false}' end
  if at > e then e = at end
  local start = e - win
  local gone = redis.call('ZRANGEBYSCORE', Z, '-inf', start)
  if #gone > 0 then
    redis.call('ZREMRANGEBYSCORE', Z, '-inf', start)
    for i = 1, #gone, 1000 do redis.call('HDEL', T, unpack(gone, i, math.min(i + 999, #gone))) end
  end
  local memberSeen = removed
  if adding and at > start then
    local last = tonumber(redis.call('ZSCORE', Z, member))
    if last then
      memberSeen = true
      redis.call('HINCRBY', T, member, 1)
      if at > last then redis.call('ZADD', Z, at, member) end
    else
      redis.call('ZADD', Z, at, member)
      redis.call('HSET', T, member, 1)
      if redis.call('ZCARD', Z) > max then
        local popped = redis.call('ZPOPMIN', Z, 1)
        redis.call('HDEL', T, popped[1])
      end
    end
  end
  save('d|' .. string.format('%.17g', e))
  if adding then
    touch(win)
    touchKey(Z, win)
    touchKey(T, win)
  end
  local distinct = redis.call('ZCARD', Z)
  if fewArg == '' then return cjson.encode({ distinct = distinct, few = 0, memberSeen = memberSeen }) end
  local few, nfew = tonumber(fewArg), 0
  local tries = redis.call('HVALS', T)
  for i = 1, #tries do if tonumber(tries[i]) <= few then nfew = nfew + 1 end end
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

-- ordered.add: JSON {"s<stage>": [[at, ref], ...]} oldest first, an empty stage absent. The chain
-- search is ordered-steps.ts's chainThrough.
if kind == 'o' then
  local stagesText, n, win, ref, max = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7], tonumber(ARGV[8])
  local stages = {}
  for v in string.gmatch(stagesText, '[^,]+') do stages[#stages + 1] = tonumber(v) end
  local raw = redis.call('HGET', K, F)
  local seq = raw and cjson.decode(raw) or {}
  local function list(k) return seq['s' .. k] or {} end
  local function chain(stage)
    local steps = {}
    steps[stage + 1] = { stage, at, ref }
    local bound = at
    for k = stage - 1, 0, -1 do
      local l, pick = list(k), nil
      for i = #l, 1, -1 do if l[i][1] <= bound then pick = l[i]; break end end
      if not pick then return nil end
      steps[k + 1] = { k, pick[1], pick[2] }
      bound = pick[1]
    end
    local first = bound
    bound = at
    for k = stage + 1, n - 1 do
      local l, pick = list(k), nil
      for i = 1, #l do if l[i][1] >= bound then pick = l[i]; break end end
      if not pick then return nil end
      steps[k + 1] = { k, pick[1], pick[2] }
      bound = pick[1]
    end
    if bound - first < win then return steps end
    return nil
  end
  local found = nil
  for _, stage in ipairs(stages) do
    found = chain(stage)
    if found then break end
  end
  for _, stage in ipairs(stages) do
    local l = list(stage)
    local i = #l + 1
    while i > 1 and l[i - 1][1] > at do i = i - 1 end
    table.insert(l, i, { at, ref })
    while #l > max do table.remove(l, 1) end
    seq['s' .. stage] = l
  end
  save(cjson.encode(seq))
  touch(win)
  if found then return cjson.encode(found) end
  return ''
end

local function live(a, win) return a and at >= a.l - win and at <= a.l + win end

if kind == 'ao' then
  local I = KEYS[2]
  local id, win, hasEvent, eventId, max, maxAlerts = ARGV[4], tonumber(ARGV[5]), ARGV[6] == '1', ARGV[7], tonumber(ARGV[8]), tonumber(ARGV[9])
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
  redis.call('ZADD', I, a.l, F)
  touch(win)
  touchKey(I, win)
  -- A type the record did not hold: past the bound, the other type last seen longest ago goes
  -- (equal scores sort by name).
  if not raw and redis.call('ZCARD', I) > maxAlerts then
    local two = redis.call('ZRANGE', I, 0, 1)
    local drop = two[1]
    if drop == F then drop = two[2] end
    redis.call('ZREM', I, drop)
    redis.call('HDEL', K, drop)
  end
  return (opened and '1' or '0') .. encoded
end

if kind == 'ap' then
  local raw = redis.call('HGET', K, F)
  if raw and live(cjson.decode(raw), tonumber(ARGV[4])) then return raw end
  return ''
end

-- delete: the sub-keys of window and distinct fields and the alert index share the record's hash
-- tag (same slot).
local function dropSubKeys(field, meta)
  local tag = string.sub(meta, 1, 2)
  if tag == 'w|' then redis.call('DEL', K .. ':w:' .. field)
  elseif tag == 'd|' then redis.call('DEL', K .. ':d:' .. field, K .. ':t:' .. field) end
end
if kind == 'x' then
  if F == '*' then
    local all = redis.call('HGETALL', K)
    for i = 1, #all, 2 do dropSubKeys(all[i], all[i + 1]) end
    redis.call('DEL', K .. ':a')
    return tostring(redis.call('DEL', K))
  end
  local meta = redis.call('HGET', K, F)
  if not meta then return '0' end
  dropSubKeys(F, meta)
  redis.call('ZREM', K .. ':a', F)
  return tostring(redis.call('HDEL', K, F))
end

return redis.error_reply('unknown state op ' .. tostring(kind))
