module github.com/vigil-security/vigil-go

go 1.19
