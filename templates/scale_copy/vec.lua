return lib("elementwise").template(OP)
