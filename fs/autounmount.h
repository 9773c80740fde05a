/* -o auto_unmount that works when the daemon is killed.
 *
 * With auto_unmount, fusermount3 stays behind and waits for its control
 * socket to close; then it opens the mountpoint and unmounts only if
 * that fails with ENOTCONN (util/fusermount.c, should_auto_unmount).  A
 * killed process releases its files in the reverse order of their
 * descriptors, and libfuse holds the socket at a higher number than the
 * FUSE device: the socket goes first, fusermount3's open reaches a
 * connection that is still up, fails otherwise than with ENOTCONN (the
 * request is aborted a moment later), and the dead mount stays for good
 * (10 of 80 kill -9s under load, tests/mount/t_cli.sh).  So the socket is
 * moved below the device: a descriptor is reserved before the mount and
 * the socket put there after it.
 *
 * Ownership: a struct autounmount is the caller's, on its stack. */
#ifndef PSFS_AUTOUNMOUNT_H
#define PSFS_AUTOUNMOUNT_H

#define AUTOUNMOUNT_FDS 1024

struct autounmount {
	int reserved;                              /* -1: none */
	unsigned char socket_before[AUTOUNMOUNT_FDS]; /* the sockets open before the mount */
};

/* Before fuse_mount: notes the sockets open and reserves a descriptor. */
void autounmount_prepare(struct autounmount *a);

/* After fuse_mount: moves the one socket the mount opened (fusermount3's)
 * to the reserved descriptor, below the FUSE device's; frees the
 * reservation otherwise (no auto_unmount, a mount without fusermount3). */
void autounmount_arrange(struct autounmount *a);

#endif
