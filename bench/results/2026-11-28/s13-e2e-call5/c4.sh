export PYTHONPATH=$PWD/python AITUNE_LIB=$PWD/build/libaitune.so; gunzip -c .gpu/s13/l3.db.gz > /tmp/l3.db; timeout 200 python3 .gpu/s13/explain.py 2>&1 | grep -v -i warn | tail -40
