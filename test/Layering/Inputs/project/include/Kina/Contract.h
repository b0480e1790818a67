// a contract
