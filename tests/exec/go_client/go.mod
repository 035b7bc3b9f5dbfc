module ucmd.test/go_client

go 1.19
