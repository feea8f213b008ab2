-- The installed daemon, started as its unit starts it (deb.sh): a slop
-- patch is tagged with the score the installed slopctl gave it, a genuine
-- patch on the same connection is not.
-- deb.sh passes, with miltertest -D: SOCK (the daemon's socket), MSGS
-- (tests/milter/msgs), WORK (a private directory) and SCORE (slopctl's).
local lib = dofile(MSGS .. "/../lib.lua")
lib.sock = SOCK
local conn = lib.connect()

local rc = lib.send(conn, MSGS .. "/lock-swap.eml", { qid = "DEB1" })
lib.check("slop patch accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
local score = lib.check_scan_headers(conn, "slop patch", true)
lib.check("daemon's score equals slopctl's", score ~= nil and score == tonumber(SCORE),
    tostring(score) .. " vs " .. SCORE)
local report = lib.header(conn, "X-Slop-Report") or ""
lib.check("X-Slop-Report names the lock swap",
    report:find("LOCK_UNLOCK_TO_DESTROY", 1, true) ~= nil, report)

rc = lib.send(conn, MSGS .. "/genuine-patch.eml", { qid = "DEB2", from = "dana@example.test" })
lib.check("genuine patch accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
lib.check_scan_headers(conn, "genuine patch", false)

mt.disconnect(conn)
lib.finish()
