module github.com/vigil-security/vigil/clients/go

go 1.19
