-- Seeds only a month nobody seeded (another instance may have won the race).
-- KEYS[1]: the month's hash. ARGV: used, dropped, lifetime in ms. Reply: 1 if it wrote, 0 if the month was there.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'used', ARGV[1], 'dropped', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
