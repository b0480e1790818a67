import kina, numpy as np
cases={
'chain':'''fn f(a: Tensor[F32, [4], @host], b: Tensor[F32, [4], @host], c: Tensor[F32, [4], @host]) -> Tensor[F32, [4], @host] {
  return a < b < c
}''',
'where':'''fn f(m: Tensor[F32, [4], @host], a: Tensor[F32, [4], @host], b: Tensor[F32, [3], @host]) -> Tensor[F32, [4], @host] {
  r = where(m, a, b)
  return r
}''',
}
for k,s in cases.items():
    try: kina.compile(s); print(k,"compiled!?")
    except Exception as e: print(k,type(e).__name__, e)
src='''fn g(ids: Tensor[I32, [4], @host], w: Tensor[F32, [4, 3], @host]) -> Tensor[F32, [], @host] {
  e = one_hot(ids, classes=4) @ w
  return reshape(sum(sum(e, axis=1), axis=0), [])
}'''
m=kina.compile(src)
try: print(kina.check_grads(m,"g",np.array([0,1,2,3],np.int32),np.ones((4,3),np.float32),wrt=["ids"]))
except Exception as e: print("intwrt",type(e).__name__, e)
print(kina.check_grads(m,"g",np.array([0,1,2,3],np.int32),np.ones((4,3),np.float32),wrt=["w"]))
