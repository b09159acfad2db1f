package dev.panoptes.control.store;

/**
 * The result store could not read or write; the message names the store and the operation. Most
 * are passing (a connection lost, a database locked or restarting) and the same operation may
 * succeed later: stores are idempotent, so a write may be repeated. {@link RecordRejectedException}
 * is the exception: the store refused the data itself.
 */
public class StoreException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
