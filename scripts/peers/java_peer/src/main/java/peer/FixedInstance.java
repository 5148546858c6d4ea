package peer;

import java.lang.annotation.Annotation;
import java.util.Iterator;
import java.util.List;

import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.util.TypeLiteral;

/**
 * The one CDI type the SDK's transport handlers take that has no plain-Java stand-in: an
 * {@code Instance<AgentCard>} for the extended card. Without a CDI container we hand them this
 * fixed, always-resolvable value; every other CDI operation is refused.
 */
final class FixedInstance<T> implements Instance<T> {
    private final T value;

    FixedInstance(T value) {
        this.value = value;
    }

    @Override
    public T get() {
        return value;
    }

    @Override
    public Iterator<T> iterator() {
        return List.of(value).iterator();
    }

    @Override
    public boolean isUnsatisfied() {
        return false;
    }

    @Override
    public boolean isAmbiguous() {
        return false;
    }

    @Override
    public Instance<T> select(Annotation... qualifiers) {
        throw new UnsupportedOperationException("no CDI container in the peer");
    }

    @Override
    public <U extends T> Instance<U> select(Class<U> subtype, Annotation... qualifiers) {
        throw new UnsupportedOperationException("no CDI container in the peer");
    }

    @Override
    public <U extends T> Instance<U> select(TypeLiteral<U> subtype, Annotation... qualifiers) {
        throw new UnsupportedOperationException("no CDI container in the peer");
    }

    @Override
    public void destroy(T instance) {
    }

    @Override
    public Handle<T> getHandle() {
        throw new UnsupportedOperationException("no CDI container in the peer");
    }

    @Override
    public Iterable<? extends Handle<T>> handles() {
        throw new UnsupportedOperationException("no CDI container in the peer");
    }
}
