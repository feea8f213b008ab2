-- Reload mid-stream: SIGUSR1 after the configuration file changed. The
-- connection opened before the reload keeps its snapshot (old SubjectTag);
-- a new connection sees the new one. A broken file on reload is refused
-- and the running configuration stays.
local lib = dofile(MSGS .. "/../lib.lua")
local SIGUSR1 = 10
local conf = WORK .. "/reload.conf"
local base = { "ReplyEnable no", "TagThreshold 3" }
local function conf_with(extra)
    local t = {}
    for _, l in ipairs(base) do t[#t + 1] = l end
    for _, l in ipairs(extra) do t[#t + 1] = l end
    return t
end
local subj = "[PATCH] net/foo: release the lock in foo_release()"

lib.write_conf(conf, conf_with({ "SubjectTag [OLD]" }))
local c1 = lib.start(conf)
local rc = lib.send(c1, MSGS .. "/lock-swap.eml", { qid = "REL1" })
lib.check("before reload: tagged [OLD]", mt.eom_check(c1, MT_HDRCHANGE, "Subject", "[OLD] " .. subj))

-- Write the new file beside and rename it in, as an admin's editor would.
lib.write_conf(conf .. ".new", conf_with({ "SubjectTag [NEW]" }))
os.rename(conf .. ".new", conf)
mt.signal(SIGUSR1)

local n = 2
lib.check("new connection sees the reload: [NEW]", lib.eventually(function()
    n = n + 1
    local c2 = lib.connect()
    rc = lib.send(c2, MSGS .. "/lock-swap.eml", { qid = "REL" .. n })
    local seen = mt.eom_check(c2, MT_HDRCHANGE, "Subject", "[NEW] " .. subj)
    mt.disconnect(c2)
    return seen
end))

-- The connection opened before the reload, now surely done, still has
-- the configuration it started with.
rc = lib.send(c1, MSGS .. "/lock-swap.eml", { qid = "REL2" })
lib.check("open connection after reload: accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
lib.check("open connection keeps its snapshot: [OLD]",
    mt.eom_check(c1, MT_HDRCHANGE, "Subject", "[OLD] " .. subj))
mt.disconnect(c1)

-- A bad file: the reload is refused, the daemon keeps running with [NEW].
lib.write_conf(conf .. ".new", conf_with({ "SubjectTag [BAD]", "NoSuchKey yes" }))
os.rename(conf .. ".new", conf)
mt.signal(SIGUSR1)
mt.sleep(1)
local c3 = lib.connect()
rc = lib.send(c3, MSGS .. "/lock-swap.eml", { qid = "BAD1" })
lib.check("after a bad reload: still running", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
lib.check("after a bad reload: old configuration kept ([NEW])",
    mt.eom_check(c3, MT_HDRCHANGE, "Subject", "[NEW] " .. subj))
mt.disconnect(c3)

lib.finish()
