# ember.vision._C: the compiled module. It exports nothing: importing it runs its
# EMBER_LIBRARY blocks, which define the vision:: operators and register their kernels.
