-- AutoLearn in the daemon learns the message it scanned: 300 distinct
-- mails that score 0 leave 300 learned genuine messages whose tokens are
-- their own (each mail has words no other has), not one empty message
-- learned 300 times. Then one mail learned as slop by its score moves
-- nothing else: the 300 stay genuine. slopctl is found beside the daemon
-- in the build tree.
local lib = dofile(MSGS .. "/../lib.lua")
local slopctl = SLOP_MILTER:gsub("milter/slop%-milter$", "slopctl/slopctl")
local state = WORK .. "/state"
local conf = WORK .. "/autolearn.conf"
local N = 300
lib.write_conf(conf, { "AutoLearn yes", "AutoLearnGenuineScore 0", "AutoLearnSlopScore 0.5",
    "RecordState no" })
local conn = lib.start(conf)

-- Distinct words per mail from its number: "kb" .. letters of i.
local function word(i)
    local w = ""
    repeat
        w = w .. string.char(string.byte("a") + i % 26)
        i = i // 26
    until i == 0
    return w
end

local function write_mail(path, i, subject, body)
    local f = assert(io.open(path, "w"))
    f:write("From: Sam Builder <sam@example.test>\n")
    f:write("To: team@example.test\n")
    f:write("Subject: " .. subject .. "\n")
    f:write("Date: Sat, 05 Dec 2026 10:00:00 +0000\n")
    f:write(string.format("Message-ID: <autolearn-%d@example.test>\n", i))
    f:write("MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n")
    f:write(body)
    f:close()
end

local function stats()
    local file = WORK .. "/stats.txt"
    os.execute(slopctl .. " learn --stats --state " .. state .. " >" .. file .. " 2>/dev/null")
    local f = io.open(file)
    local out = f and f:read("a") or ""
    if f then
        f:close()
    end
    return tonumber(out:match("slop messages%s+(%d+)") or "-1"),
        tonumber(out:match("genuine messages%s+(%d+)") or "-1"),
        tonumber(out:match("tokens%s+(%d+)") or "-1")
end

-- The job learns after the verdict: wait (bounded) for the last write.
local function wait_stats(slop, genuine)
    local s, g, t
    for _ = 1, 100 do
        s, g, t = stats()
        if s == slop and g == genuine then
            break
        end
        os.execute("sleep 0.1")
    end
    return s, g, t
end

local path = WORK .. "/mail.eml"
local answered = 0
for i = 1, N do
    local w = word(i * 7919)
    write_mail(path, i, "nightly build of kb" .. w,
        "Hi,\n\nThe nightly build of kb" .. w .. " finished on host hz" .. w ..
        " with the usual warnings.\nNothing else changed since yesterday.\n\nSam\n")
    local rc = lib.send(conn, path, { qid = "AL" .. i })
    if rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE then
        answered = answered + 1
    end
end
lib.check("every mail answered", answered == N, answered .. " of " .. N)

local s, g, t = wait_stats(0, N)
lib.check("300 distinct mails: 300 genuine messages learned", g == N and s == 0,
    "slop " .. s .. ", genuine " .. g)
-- Each mail brings at least its two own words (and their bigrams).
lib.check("each mail's own words learned", t >= 2 * N, "tokens " .. t)

-- A mail that scores (a patch whose log claims more than its diff
-- does) is learned as slop by AutoLearnSlopScore 0.5, as one message
-- of its own: the genuine ones stay.
local rc = lib.send(conn, MSGS .. "/lock-swap.eml", { qid = "ALS" })
lib.check("the scoring mail answered", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
s, g = wait_stats(1, N)
lib.check("one slop message, the genuine ones kept", s == 1 and g == N,
    "slop " .. s .. ", genuine " .. g)

mt.disconnect(conn)
lib.finish()
