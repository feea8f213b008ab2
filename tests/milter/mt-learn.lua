-- Learning while the daemon runs: slopctl learn writes the learned
-- counts while messages keep flowing through the daemon (every one
-- answered, none tempfailed); the next message after learning sees the
-- new counts without a restart or SIGUSR1 (X-Slop-Report names
-- LEARNED_*), silent before LearnMinimum is reached. slopctl is found
-- beside the daemon in the build tree, the fixtures under tests/.
local lib = dofile(MSGS .. "/../lib.lua")
local slopctl = SLOP_MILTER:gsub("milter/slop%-milter$", "slopctl/slopctl")
local fix = MSGS .. "/../../fixtures/learn-mixed"
local state = WORK .. "/state"
local conf = WORK .. "/learn.conf"
lib.write_conf(conf, { "LearnMinimum 8", "RecordState no" })
local conn = lib.start(conf)

local function learn(args)
    return os.execute(slopctl .. " learn --state " .. state .. " --rules " .. RULES .. " " ..
        args .. " >/dev/null 2>&1")
end

local function report(qid, path)
    local rc = lib.send(conn, path, { qid = qid })
    return rc, lib.header(conn, "X-Slop-Report") or ""
end

local rc, rep = report("L0", fix .. "/slop/01.eml")
lib.check("before learning: answered", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
lib.check("before learning: no LEARNED_ finding", not rep:find("LEARNED_"), rep)

-- A learner in the background over the training halves, again and again
-- (relearning is a no-op write), while messages flow.
-- Each list built from its own directory: a gsub of "/slop/" would also
-- rewrite a checkout that lies in a directory named slop.
local even, geven = "", ""
for i = 0, 14, 2 do
    even = even .. string.format(" %s/slop/%02d.eml", fix, i)
    geven = geven .. string.format(" %s/genuine/%02d.eml", fix, i)
end
os.execute("( i=0; while [ $i -lt 5 ]; do " .. slopctl .. " learn --slop --state " .. state ..
    " --rules " .. RULES .. even .. " && " .. slopctl .. " learn --genuine --state " .. state ..
    " --rules " .. RULES .. geven .. "; i=$((i + 1)); done; touch " .. WORK ..
    "/learn.done ) >/dev/null 2>&1 &")
local answered, sent = 0, 0
for i = 1, 40 do
    local path = string.format("%s/%s/%02d.eml", fix, i % 2 == 0 and "slop" or "genuine",
        i % 16)
    local r = lib.send(conn, path, { qid = "LD" .. i })
    sent = sent + 1
    if r == SMFIR_ACCEPT or r == SMFIR_CONTINUE then
        answered = answered + 1
    end
end
lib.check("while learning: every message answered, none tempfailed", answered == sent,
    answered .. " of " .. sent)
-- Wait (bounded) for the learner to finish: ten slopctl runs, each
-- loading the rules, take minutes on a machine loaded by a parallel ctest.
local done = false
for _ = 1, 600 do
    local f = io.open(WORK .. "/learn.done")
    if f then
        f:close()
        done = true
        break
    end
    os.execute("sleep 0.2")
end
lib.check("the background learner finished", done)

rc, rep = report("L1", fix .. "/slop/01.eml")
lib.check("after learning: held-out slop gets LEARNED_SLOP_ (no restart)",
    rep:find("LEARNED_SLOP_") ~= nil, rep)
rc, rep = report("L2", fix .. "/genuine/01.eml")
lib.check("after learning: held-out genuine gets LEARNED_GENUINE_",
    rep:find("LEARNED_GENUINE_") ~= nil, rep)

-- Forget one slop message: below LearnMinimum the findings fall silent
-- for the next message.
os.execute(slopctl .. " forget --state " .. state .. " --rules " .. RULES .. " " .. fix ..
    "/slop/00.eml >/dev/null 2>&1")
rc, rep = report("L3", fix .. "/slop/01.eml")
lib.check("below LearnMinimum again: silent", not rep:find("LEARNED_"), rep)

mt.disconnect(conn)
lib.finish()
