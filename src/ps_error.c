#include "ps_error.h"

const char *ps_strerror(ps_err err)
{
	switch (err) {
	case PS_OK: return "success";
	case PS_ERR_NOMEM: return "out of memory";
	case PS_ERR_NOENT: return "no such session, entry or file";
	case PS_ERR_NOTDIR: return "not a directory";
	case PS_ERR_ISDIR: return "is a directory";
	case PS_ERR_IO: return "reading the session store failed";
	case PS_ERR_INVALID: return "invalid input";
	case PS_ERR_NOTSESSION: return "not a pi session file";
	case PS_ERR_STORE_READONLY: return "the session store cannot be written";
	case PS_ERR_TOOBIG: return "value too large for the index";
	case PS_ERR_NOSPACE: return "no space left on the store's disk";
	case PS_ERR_PERM: return "not permitted: history is append-only, generated files are read-only";
	case PS_ERR_COSTLY: return "the query spent its budget of work";
	case PS_ERR_INTR: return "interrupted";
	}
	return "unknown error";
}
