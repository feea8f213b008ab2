-- One ordinary MTA session against a daemon stalled-peers.sh started
-- (this script does not start one). -D EXPECT=tempfail: the daemon is at
-- MaxConnections, so CONNECT must be answered tempfail; EXPECT=served:
-- CONNECT is answered CONTINUE and a message goes through. Either way the
-- session must be answered: every read waits at most 30 s (a generous
-- bound, not a timing assertion).
local lib = dofile(MSGS .. "/../lib.lua")

mt.set_timeout(30)
local conn = mt.connect("unix:" .. lib.sock, 20, 0.25)
lib.check("connected and options negotiated", conn ~= nil)
if conn == nil then
    lib.finish()
end
lib.check("CONNECT sent", mt.conninfo(conn, "client.example.test", "192.0.2.10") == nil)
local rc = mt.getreply(conn)
if EXPECT == "tempfail" then
    lib.check("over MaxConnections: CONNECT answered tempfail", rc == SMFIR_TEMPFAIL, rc)
else
    lib.check("CONNECT answered continue", rc == SMFIR_CONTINUE, rc)
    rc = lib.send(conn, MSGS .. "/genuine-patch.eml", { qid = "CAP1" })
    lib.check("message accepted", rc == SMFIR_ACCEPT or rc == SMFIR_CONTINUE, rc)
    lib.check("message scanned", lib.header(conn, "X-Slop-Status") ~= nil)
end
mt.disconnect(conn)
lib.finish()
