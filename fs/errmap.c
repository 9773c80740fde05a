#include <errno.h>
#include "pisessionfs.h"

int psfs_errno(ps_err err)
{
	switch (err) {
	case PS_OK: return 0;
	case PS_ERR_NOMEM: return ENOMEM;
	case PS_ERR_NOENT: return ENOENT;
	case PS_ERR_NOTDIR: return ENOTDIR;
	case PS_ERR_ISDIR: return EISDIR;
	case PS_ERR_IO: return EIO;
	case PS_ERR_INVALID: return EINVAL;
	case PS_ERR_NOTSESSION: return EINVAL;
	case PS_ERR_STORE_READONLY: return EROFS;
	case PS_ERR_TOOBIG: return EFBIG;
	case PS_ERR_NOSPACE: return ENOSPC;
	case PS_ERR_PERM: return EPERM;
	case PS_ERR_COSTLY: return ETIMEDOUT;
	case PS_ERR_INTR: return EINTR;
	}
	return EIO;
}
