-- Report kind from the envelope: a short plain-text report sent to the
-- security address (ReportRecipients, default security@*) gets the report
-- checks; the same text sent only to a list is not made a report by its
-- recipients, and one more ReportRecipients pattern makes that list a
-- report address too.
local lib = dofile(MSGS .. "/../lib.lua")

local function tests_of(conn)
    local status = lib.header(conn, "X-Slop-Status") or ""
    return status, status:match("tests=(%S*)") or ""
end

local conf = WORK .. "/envelope.conf"
lib.write_conf(conf, { "ReplyEnable no" })
local conn = lib.start(conf)

-- 1. To the security address (the To: header names only the list).
local rc = lib.send(conn, MSGS .. "/short-report.eml", {
    qid = "ENV1", rcpts = { "<Security@Slop.Test>" },
})
lib.check("security@: accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
local status, tests = tests_of(conn)
lib.check("security@: X-Slop-Status added", status ~= "")
lib.check("security@: report checks ran", tests:find("REPORT_", 1, true) ~= nil, status)

-- 2. The same text to the list only: no report checks.
rc = lib.send(conn, MSGS .. "/short-report.eml", {
    qid = "ENV2", rcpts = { "dev@lists.slop.test" },
})
lib.check("list: accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
status, tests = tests_of(conn)
lib.check("list: X-Slop-Status added", status ~= "")
lib.check("list: no report checks", tests:find("REPORT_", 1, true) == nil, status)
mt.disconnect(conn)

-- 3. A site whose reports also arrive at the list's address (reloaded).
local SIGUSR1 = 10
lib.write_conf(conf .. ".new", { "ReplyEnable no", "ReportRecipients security@*, dev@lists.slop.test" })
os.rename(conf .. ".new", conf)
mt.signal(SIGUSR1)
local qid = 2
lib.check("listed pattern: report checks ran", lib.eventually(function()
    qid = qid + 1
    conn = lib.connect()
    rc = lib.send(conn, MSGS .. "/short-report.eml", {
        qid = "ENV" .. qid, rcpts = { "dev@lists.slop.test" },
    })
    status, tests = tests_of(conn)
    if (rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE) and tests:find("REPORT_", 1, true) ~= nil then
        return true
    end
    mt.disconnect(conn)
    return false
end), status)
mt.disconnect(conn)
lib.finish()
