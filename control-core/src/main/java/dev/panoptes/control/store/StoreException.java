package dev.panoptes.control.store;

/** The result store could not read or write; the message names the store and the operation. */
public class StoreException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
